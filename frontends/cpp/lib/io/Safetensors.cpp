//===- Safetensors.cpp - reading and writing safetensors files ------------===//
//
// Tensors as the runtime's reader and writer of the format
// (sinter/runtime/Safetensors.h) hand them over: this file makes Tensors
// of its bytes, and the bytes of Tensors.
//
//===----------------------------------------------------------------------===//
#include "sinter/io/Safetensors.h"
#include "sinter/io/AtomicFile.h"

#include "../Format.h"
#include "ReadFile.h"
#include "sinter/Error.h"

#include "sinter/runtime/Safetensors.h"

#include <cstring>

namespace sinter::io {
namespace {

const char *fileDType(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return "F32";
  case DType::i32:
    return "I32";
  case DType::i64:
    return "I64";
  case DType::boolean:
    return "BOOL";
  default:
    return nullptr;
  }
}

template <typename T> void append(std::string &bytes, const std::vector<T> &values) {
  size_t at = bytes.size();
  bytes.resize(at + values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(bytes.data() + at, values.data(), values.size() * sizeof(T));
}

/// The tensor's elements as the file stores them.
std::string bytesOf(const Tensor &tensor, Loc loc) {
  std::string bytes;
  switch (tensor.dtype()) {
  case DType::f32:
    append(bytes, tensor.to_vector<float>(loc));
    break;
  case DType::i32:
    append(bytes, tensor.to_vector<int32_t>(loc));
    break;
  case DType::i64:
    append(bytes, tensor.to_vector<int64_t>(loc));
    break;
  default: { // bool, checked by the caller
    std::vector<bool> values = tensor.to_vector<bool>(loc);
    for (bool v : values)
      bytes.push_back(v ? 1 : 0);
  }
  }
  return bytes;
}

template <typename T> std::vector<T> readValues(const char *data, int64_t count) {
  std::vector<T> values(static_cast<size_t>(count));
  if (count > 0) // an empty vector's data() may be null, which memcpy may not take
    std::memcpy(values.data(), data, static_cast<size_t>(count) * sizeof(T));
  return values;
}

template <typename From, typename To>
std::vector<To> readConverted(const char *data, int64_t count) {
  std::vector<From> raw = readValues<From>(data, count);
  return std::vector<To>(raw.begin(), raw.end());
}

} // namespace

const Tensor &SafetensorsFile::at(const std::string &name, Loc loc) const {
  std::string names;
  for (const auto &[key, tensor] : tensors) {
    if (key == name)
      return tensor;
    names += (names.empty() ? "" : ", ") + key;
  }
  throwError(cat("safetensors: no tensor named '", name, "' (the file holds: ", names, ")"), loc);
}

void save_safetensors(const std::string &path, const NamedTensors &tensors,
                      const std::map<std::string, std::string> &metadata, Loc loc) {
  std::vector<std::string> data;
  std::vector<runtime::SafetensorsWrite> writes;
  for (const auto &[name, tensor] : tensors) {
    SINTER_CHECK(tensor.defined(), loc, cat("save_safetensors: tensor '", name, "' is undefined"));
    const char *dtype = fileDType(tensor.dtype());
    SINTER_CHECK(dtype != nullptr, loc,
                 cat("save_safetensors: tensor '", name, "' is ", sinter::name(tensor.dtype()),
                     "; f32, i32, i64 and bool can be saved (convert with to(DType::f32))"));
    data.push_back(bytesOf(tensor, loc));
    writes.push_back({name, dtype, tensor.shape(), {}});
  }
  for (size_t i = 0; i < writes.size(); ++i)
    writes[i].bytes = data[i];
  Status written = runtime::writeSafetensors(path, writes, metadata, "save_safetensors");
  SINTER_CHECK(written.ok(), loc, std::string(written.message()));
}

SafetensorsFile load_safetensors(const std::string &path, Loc loc) {
  StatusOr<runtime::Safetensors> parsed =
      runtime::parseSafetensors(readFile(path, "load_safetensors", loc));
  if (!parsed.ok())
    throwError(cat("load_safetensors: ", path, ": ", std::string(parsed.status().message())), loc);
  SafetensorsFile file;
  file.metadata = parsed->metadata;
  for (const runtime::SafetensorsTensor &entry : parsed->tensors) {
    const char *at = parsed->data(entry).data();
    int64_t count = 1;
    for (int64_t extent : entry.shape)
      count *= extent;
    const Shape &shape = entry.shape;
    const std::string &dtype = entry.dtype;
    Tensor tensor;
    if (dtype == "F32")
      tensor = from_vector(readValues<float>(at, count), shape, std::nullopt, loc);
    else if (dtype == "F64")
      tensor = from_vector(readConverted<double, float>(at, count), shape, std::nullopt, loc);
    else if (dtype == "I32")
      tensor = from_vector(readValues<int32_t>(at, count), shape, std::nullopt, loc);
    else if (dtype == "I64")
      tensor = from_vector(readValues<int64_t>(at, count), shape, std::nullopt, loc);
    else if (dtype == "BOOL")
      tensor = from_vector(readConverted<uint8_t, int32_t>(at, count), shape, DType::boolean, loc);
    else if (dtype == "U8")
      tensor = from_vector(readConverted<uint8_t, int32_t>(at, count), shape, std::nullopt, loc);
    else
      tensor = from_vector(readConverted<uint16_t, int32_t>(at, count), shape, std::nullopt, loc);
    file.tensors.emplace_back(entry.name, std::move(tensor));
  }
  return file;
}

} // namespace sinter::io
