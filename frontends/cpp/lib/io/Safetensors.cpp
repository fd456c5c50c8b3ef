//===- Safetensors.cpp - reading and writing safetensors files ------------===//
//
// The header is JSON, read and written with nlohmann-json. Values are
// written little-endian as they are in memory (the CPUs Sinter runs on are
// little-endian; checked at compile time).
//
//===----------------------------------------------------------------------===//
#include "sinter/io/Safetensors.h"
#include "sinter/io/AtomicFile.h"

#include "../Format.h"
#include "ReadFile.h"
#include "sinter/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <set>

namespace sinter::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors files are little-endian; this writer copies memory as it is");

using json = nlohmann::json;

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
  json header = json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  std::string data;
  std::set<std::string> seen;
  for (const auto &[name, tensor] : tensors) {
    SINTER_CHECK(!name.empty() && name != "__metadata__", loc,
                 cat("save_safetensors: invalid tensor name '", name, "'"));
    SINTER_CHECK(seen.insert(name).second, loc,
                 cat("save_safetensors: two tensors are named '", name, "'"));
    SINTER_CHECK(tensor.defined(), loc, cat("save_safetensors: tensor '", name, "' is undefined"));
    const char *dtype = fileDType(tensor.dtype());
    SINTER_CHECK(dtype != nullptr, loc,
                 cat("save_safetensors: tensor '", name, "' is ", sinter::name(tensor.dtype()),
                     "; f32, i32, i64 and bool can be saved (convert with to(DType::f32))"));
    size_t begin = data.size();
    data += bytesOf(tensor, loc);
    header[name] = {
        {"dtype", dtype}, {"shape", tensor.shape()}, {"data_offsets", {begin, data.size()}}};
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' '); // the data starts 8-byte aligned
  uint64_t length = text.size();

  write_file_atomically(path,
                        {std::string_view(reinterpret_cast<const char *>(&length), 8), text, data},
                        "save_safetensors", loc);
}

SafetensorsFile load_safetensors(const std::string &path, Loc loc) {
  std::string bytes = readFile(path, "load_safetensors", loc);
  auto fail = [&](const std::string &what) -> void {
    throwError(cat("load_safetensors: ", path, ": ", what), loc);
  };
  if (bytes.size() < 8)
    fail(cat("truncated (", bytes.size(), " bytes; the header length alone takes 8)"));
  uint64_t length;
  std::memcpy(&length, bytes.data(), 8);
  if (length > bytes.size() - 8)
    fail(cat("the header length ", length, " runs past the end of the file (", bytes.size(),
             " bytes)"));
  json header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<int64_t>(length),
                            nullptr, /*allow_exceptions=*/false);
  if (!header.is_object())
    fail("the header is not a JSON object");
  const char *data = bytes.data() + 8 + length;
  const uint64_t dataBytes = bytes.size() - 8 - length;

  SafetensorsFile file;
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (const auto &[name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        fail("\"__metadata__\" is not an object");
      for (const auto &[key, value] : entry.items()) {
        if (!value.is_string())
          fail(cat("metadata \"", key, "\" is not a string"));
        file.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
        !entry.contains("shape") || !entry["shape"].is_array() || !entry.contains("data_offsets") ||
        !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
      fail(cat("tensor '", name, "' needs \"dtype\", \"shape\" and two \"data_offsets\""));
    // The element count in checked arithmetic: no shape overflows it (the
    // range's bytes, at most the file's, bound any real tensor).
    Shape shape;
    uint64_t elements = 1;
    for (const json &size : entry["shape"]) {
      if (!size.is_number_unsigned() || size.get<uint64_t>() > (uint64_t(1) << 62))
        fail(cat("tensor '", name, "' has a shape entry that is not a size: ", size.dump()));
      uint64_t extent = size.get<uint64_t>();
      if (extent != 0 && elements > (uint64_t(1) << 62) / extent)
        fail(cat("tensor '", name, "' has a shape ", entry["shape"].dump(),
                 " whose element count overflows"));
      elements *= extent;
      shape.push_back(static_cast<int64_t>(extent));
    }
    const json &offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      fail(cat("tensor '", name, "' has data_offsets that are not byte positions"));
    uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > dataBytes)
      fail(cat("tensor '", name, "' has bytes [", begin, ", ", end, ") outside the ", dataBytes,
               " bytes of data (truncated file?)"));
    std::string dtype = entry["dtype"].get<std::string>();
    int64_t count = static_cast<int64_t>(elements);
    static const std::map<std::string, uint64_t> sizes = {
        {"F32", 4}, {"F64", 8}, {"I32", 4}, {"I64", 8}, {"BOOL", 1}, {"U8", 1}, {"U16", 2}};
    auto size = sizes.find(dtype);
    if (size == sizes.end())
      fail(cat("tensor '", name, "' has dtype ", dtype,
               ", which Sinter does not read (F32, F64, I32, I64, BOOL, U8, U16)"));
    if (elements > (end - begin) / size->second || elements * size->second != end - begin)
      fail(cat("tensor '", name, "' of shape ", toString(shape), " and dtype ", dtype, " needs ",
               elements, " elements of ", size->second, " bytes, its range holds ", end - begin,
               " bytes"));
    ranges.push_back({begin, end, name});
    const char *at = data + begin;
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
    file.tensors.emplace_back(name, std::move(tensor));
  }
  // The ranges must tile the data: no overlaps, no holes.
  std::vector<size_t> order(ranges.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return ranges[a].begin < ranges[b].begin; });
  uint64_t next = 0;
  for (size_t i : order) {
    if (ranges[i].begin != next)
      fail(cat("tensor '", ranges[i].name, "' starts at byte ", ranges[i].begin, ", expected ",
               next, " (overlapping or missing data)"));
    next = ranges[i].end;
  }
  if (next != dataBytes)
    fail(cat("the tensors cover ", next, " of the ", dataBytes, " bytes of data"));
  std::vector<std::pair<std::string, Tensor>> sorted;
  for (size_t i : order)
    sorted.push_back(std::move(file.tensors[i]));
  file.tensors = std::move(sorted);
  return file;
}

} // namespace sinter::io
