//===- Value.cpp - the two forms of a computed value ----------------------===//
//
// See Note [Two forms of a value] in sinter/lazy/Node.h. The doubles are
// already rounded to the dtype, so every conversion here is exact.
//
//===----------------------------------------------------------------------===//
#include "sinter/lazy/Node.h"
#include "sinter/runtime/Allocator.h"
#include "sinter/runtime/CudaExecutable.h"

#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace sinter::lazy {
namespace {

uint32_t bitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return bits;
}

float floatOf(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

/// IEEE binary16 bits of `x`, which is exactly representable in binary16
/// (or infinite, or NaN).
uint16_t halfBits(float x) {
  uint32_t bits = bitsOf(x);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  int exponent = static_cast<int>((bits >> 23) & 0xffu);
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff)
    return sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0u);
  int e = exponent - 127 + 15;
  if (e >= 31)
    return sign | 0x7c00u;
  if (e <= 0) { // a binary16 subnormal (or zero)
    if (e < -10)
      return sign;
    return sign | static_cast<uint16_t>((mantissa | 0x800000u) >> (14 - e));
  }
  return sign | static_cast<uint16_t>(e << 10) | static_cast<uint16_t>(mantissa >> 13);
}

double fromHalfBits(uint16_t h) {
  double sign = (h & 0x8000u) ? -1.0 : 1.0;
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -24);
  if (exponent == 31)
    return mantissa != 0 ? std::nan("") : sign * HUGE_VAL;
  return sign * std::ldexp(mantissa | 0x400, exponent - 25);
}

template <typename T> void put(uint8_t *at, T x) { std::memcpy(at, &x, sizeof(T)); }
template <typename T> T get(const uint8_t *at) {
  T x;
  std::memcpy(&x, at, sizeof(T));
  return x;
}

} // namespace

Value::Bytes Value::allocate(int64_t bytes) {
  runtime::HostAllocator &allocator = runtime::HostAllocator::get();
  void *memory = allocator.allocate(bytes);
  if (memory == nullptr)
    throw std::bad_alloc();
  return adopt(memory);
}

Value::Bytes Value::adopt(void *block) {
  return Bytes(static_cast<uint8_t *>(block),
               [](uint8_t *p) { runtime::HostAllocator::get().deallocate(p); });
}

Value::DeviceBytes Value::allocateOn(runtime::CudaDevice &device, int64_t bytes, std::string &why) {
  StatusOr<void *> memory = device.allocate(std::max<int64_t>(bytes, 1));
  if (!memory.ok()) {
    why = "cannot allocate " + std::to_string(bytes) + " bytes on " + device.device().name() +
          ": " + std::string(memory.status().message());
    return nullptr;
  }
  return DeviceBytes(static_cast<uint8_t *>(*memory),
                     [&device](uint8_t *p) { device.deallocate(p); });
}

Value::Value(runtime::CudaDevice &device, DeviceBytes bytes, int64_t count, DType dtype)
    : dtype_(dtype), count_(count), madeOnDevice_(true), device_(&device),
      deviceBytes_(std::move(bytes)) {}

Value::Value(std::vector<double> elements, DType dtype)
    : dtype_(dtype), count_(static_cast<int64_t>(elements.size())), elements_(std::move(elements)) {
  std::call_once(elementsOnce_, [] {});
}

Value::Value(Bytes bytes, int64_t count, DType dtype)
    : dtype_(dtype), count_(count), bytes_(std::move(bytes)), hostReady_(true) {
  std::call_once(bytesOnce_, [] {});
}

const std::vector<double> &Value::elements() const {
  std::call_once(elementsOnce_, [this] {
    elements_.resize(count_);
    const uint8_t *at = sharedBytes().get();
    size_t size = elementSize(dtype_);
    for (int64_t k = 0; k < count_; ++k, at += size) {
      switch (dtype_) {
      case DType::f32:
        elements_[k] = get<float>(at);
        break;
      case DType::f16:
        elements_[k] = fromHalfBits(get<uint16_t>(at));
        break;
      case DType::bf16:
        elements_[k] = floatOf(static_cast<uint32_t>(get<uint16_t>(at)) << 16);
        break;
      case DType::i32:
        elements_[k] = get<int32_t>(at);
        break;
      case DType::i64:
        elements_[k] = static_cast<double>(get<int64_t>(at));
        break;
      case DType::boolean:
        elements_[k] = *at != 0 ? 1.0 : 0.0;
        break;
      }
    }
  });
  return elements_;
}

const Value::Bytes &Value::sharedBytes() const {
  std::call_once(bytesOnce_, [this] {
    size_t size = elementSize(dtype_);
    Bytes bytes = allocate(count_ * static_cast<int64_t>(size));
    if (madeOnDevice_) {
      // Its device form was set at construction and never changes.
      Status copied =
          device_->copyToHost(bytes.get(), deviceBytes_.get(), count_ * static_cast<int64_t>(size));
      if (!copied.ok())
        throw std::runtime_error("reading a value of " + std::to_string(count_) +
                                 " elements from " + device_->device().name() + ": " +
                                 std::string(copied.message()));
      bytes_ = std::move(bytes);
      hostReady_ = true;
      return;
    }
    bytes_ = std::move(bytes);
    uint8_t *at = bytes_.get();
    for (int64_t k = 0; k < count_; ++k, at += size) {
      double x = elements_[k];
      switch (dtype_) {
      case DType::f32:
        put(at, static_cast<float>(x));
        break;
      case DType::f16:
        put(at, halfBits(static_cast<float>(x)));
        break;
      case DType::bf16:
        put(at, static_cast<uint16_t>(bitsOf(static_cast<float>(x)) >> 16));
        break;
      case DType::i32:
        put(at, static_cast<int32_t>(x));
        break;
      case DType::i64:
        put(at, static_cast<int64_t>(x));
        break;
      case DType::boolean:
        *at = x != 0 ? 1 : 0;
        break;
      }
    }
    hostReady_ = true;
  });
  return bytes_;
}

const uint8_t *Value::bytes() const { return sharedBytes().get(); }

Value::DeviceBytes Value::onDevice(runtime::CudaDevice &device, std::string &why) const {
  std::lock_guard<std::mutex> lock(deviceMutex_);
  if (deviceBytes_ != nullptr) {
    if (device_ == &device)
      return deviceBytes_;
    why = "the value is on " + device_->device().name() + ", not on " + device.device().name();
    return nullptr;
  }
  int64_t bytes = count_ * static_cast<int64_t>(elementSize(dtype_));
  DeviceBytes memory = allocateOn(device, bytes, why);
  if (memory == nullptr)
    return nullptr;
  if (Status copied = device.copyToDevice(memory.get(), sharedBytes().get(), bytes); !copied.ok()) {
    why = "copying " + std::to_string(bytes) + " bytes to " + device.device().name() + ": " +
          std::string(copied.message());
    return nullptr;
  }
  device_ = &device;
  deviceBytes_ = std::move(memory);
  return deviceBytes_;
}

bool Value::memoryShared() const {
  // A value made on the device has no host form until it is read; one made
  // on the host has one already, or converts it from its doubles here.
  if ((!madeOnDevice_ || hostReady_) && sharedBytes().use_count() > 1)
    return true;
  std::lock_guard<std::mutex> lock(deviceMutex_);
  return deviceBytes_ != nullptr && deviceBytes_.use_count() > 1;
}

} // namespace sinter::lazy
