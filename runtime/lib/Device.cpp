//===- Device.cpp - which device, and the host ----------------------------===//
#include "sinter/runtime/Device.h"

#include <charconv>

namespace sinter::runtime {

std::string DeviceId::name() const {
  return kind == DeviceKind::Cpu ? std::string("cpu") : "cuda:" + std::to_string(index);
}

std::optional<DeviceId> DeviceId::parse(std::string_view text) {
  if (text == "cpu")
    return DeviceId{DeviceKind::Cpu, 0};
  if (text == "cuda")
    return DeviceId{DeviceKind::Cuda, 0};
  constexpr std::string_view kCudaPrefix = "cuda:";
  if (!text.starts_with(kCudaPrefix))
    return std::nullopt;
  std::string_view digits = text.substr(kCudaPrefix.size());
  // Digits only: from_chars would also take a sign.
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  int index = -1;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (error != std::errc() || end != digits.data() + digits.size())
    return std::nullopt;
  return DeviceId{DeviceKind::Cuda, index};
}

const Device &hostDevice() {
  static const Device host{.id = {DeviceKind::Cpu, 0}, .granularity = 64};
  return host;
}

} // namespace sinter::runtime
