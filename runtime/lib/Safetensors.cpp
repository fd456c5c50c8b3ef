//===- Safetensors.cpp - the format's one reader and writer ---------------===//
//
// The header is JSON, read and written with nlohmann-json. Values are
// written little-endian as they are in memory (the CPUs Sinter runs on are
// little-endian; checked at compile time). The reader never allocates what
// a header claims: sizes are checked against the file's bytes first.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Safetensors.h"

#include "sinter/runtime/Files.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <set>

namespace sinter::runtime {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors files are little-endian; this writer copies memory as it is");

using Json = nlohmann::json;

std::string shapeText(const std::vector<int64_t> &shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

} // namespace

uint64_t safetensorsElementBytes(std::string_view dtype) {
  if (dtype == "F32" || dtype == "I32")
    return 4;
  if (dtype == "F64" || dtype == "I64")
    return 8;
  if (dtype == "U16")
    return 2;
  if (dtype == "BOOL" || dtype == "U8")
    return 1;
  return 0;
}

const SafetensorsTensor *Safetensors::find(std::string_view name) const {
  for (const SafetensorsTensor &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

StatusOr<Safetensors> parseSafetensors(std::string bytes) {
  auto fail = [](const std::string &what) { return absl::InvalidArgumentError(what); };
  if (bytes.size() < 8)
    return fail(
        absl::StrCat("truncated (", bytes.size(), " bytes; the header length alone takes 8)"));
  uint64_t length;
  std::memcpy(&length, bytes.data(), 8);
  if (length > bytes.size() - 8)
    return fail(absl::StrCat("the header length ", length, " runs past the end of the file (",
                             bytes.size(), " bytes)"));
  Json header = Json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<int64_t>(length),
                            nullptr, /*allow_exceptions=*/false);
  if (!header.is_object())
    return fail("the header is not a JSON object");
  Safetensors file;
  file.dataStart = 8 + length;
  const uint64_t dataBytes = bytes.size() - 8 - length;
  for (const auto &[name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        return fail("\"__metadata__\" is not an object");
      for (const auto &[key, value] : entry.items()) {
        if (!value.is_string())
          return fail(absl::StrCat("metadata \"", key, "\" is not a string"));
        file.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() ||
        !entry.contains("shape") || !entry["shape"].is_array() || !entry.contains("data_offsets") ||
        !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
      return fail(
          absl::StrCat("tensor '", name, "' needs \"dtype\", \"shape\" and two \"data_offsets\""));
    // The element count in checked arithmetic: no shape overflows it (the
    // range's bytes, at most the file's, bound any real tensor).
    SafetensorsTensor tensor;
    tensor.name = name;
    uint64_t elements = 1;
    for (const Json &size : entry["shape"]) {
      if (!size.is_number_unsigned() || size.get<uint64_t>() > (uint64_t(1) << 62))
        return fail(absl::StrCat("tensor '", name,
                                 "' has a shape entry that is not a size: ", size.dump()));
      uint64_t extent = size.get<uint64_t>();
      if (extent != 0 && elements > (uint64_t(1) << 62) / extent)
        return fail(absl::StrCat("tensor '", name, "' has a shape ", entry["shape"].dump(),
                                 " whose element count overflows"));
      elements *= extent;
      tensor.shape.push_back(static_cast<int64_t>(extent));
    }
    const Json &offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      return fail(absl::StrCat("tensor '", name, "' has data_offsets that are not byte positions"));
    tensor.begin = offsets[0].get<uint64_t>();
    tensor.end = offsets[1].get<uint64_t>();
    if (tensor.begin > tensor.end || tensor.end > dataBytes)
      return fail(absl::StrCat("tensor '", name, "' has bytes [", tensor.begin, ", ", tensor.end,
                               ") outside the ", dataBytes, " bytes of data (truncated file?)"));
    tensor.dtype = entry["dtype"].get<std::string>();
    uint64_t size = safetensorsElementBytes(tensor.dtype);
    if (size == 0)
      return fail(absl::StrCat("tensor '", name, "' has dtype ", tensor.dtype,
                               ", which Sinter does not read (F32, F64, I32, I64, BOOL, U8, U16)"));
    uint64_t held = tensor.end - tensor.begin;
    if (elements > held / size || elements * size != held)
      return fail(absl::StrCat("tensor '", name, "' of shape ", shapeText(tensor.shape),
                               " and dtype ", tensor.dtype, " needs ", elements, " elements of ",
                               size, " bytes, its range holds ", held, " bytes"));
    file.tensors.push_back(std::move(tensor));
  }
  // The ranges must tile the data: no overlaps, no holes.
  std::stable_sort(file.tensors.begin(), file.tensors.end(),
                   [](const auto &a, const auto &b) { return a.begin < b.begin; });
  uint64_t next = 0;
  for (const SafetensorsTensor &tensor : file.tensors) {
    if (tensor.begin != next)
      return fail(absl::StrCat("tensor '", tensor.name, "' starts at byte ", tensor.begin,
                               ", expected ", next, " (overlapping or missing data)"));
    next = tensor.end;
  }
  if (next != dataBytes)
    return fail(absl::StrCat("the tensors cover ", next, " of the ", dataBytes, " bytes of data"));
  file.bytes = std::move(bytes);
  return file;
}

Status writeSafetensors(const std::string &path, const std::vector<SafetensorsWrite> &tensors,
                        const std::map<std::string, std::string> &metadata, const char *who) {
  Json header = Json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const SafetensorsWrite &tensor : tensors) {
    if (tensor.name.empty() || tensor.name == "__metadata__")
      return absl::InvalidArgumentError(
          absl::StrCat(who, ": invalid tensor name '", tensor.name, "'"));
    if (!seen.insert(tensor.name).second)
      return absl::InvalidArgumentError(
          absl::StrCat(who, ": two tensors are named '", tensor.name, "'"));
    uint64_t size = safetensorsElementBytes(tensor.dtype);
    uint64_t elements = 1;
    for (int64_t extent : tensor.shape)
      elements *= static_cast<uint64_t>(extent);
    if (size == 0 || elements * size != tensor.bytes.size())
      return absl::InvalidArgumentError(absl::StrCat(who, ": tensor '", tensor.name, "' is ",
                                                     tensor.dtype, shapeText(tensor.shape), " but ",
                                                     tensor.bytes.size(), " bytes"));
    header[tensor.name] = {{"dtype", tensor.dtype},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + tensor.bytes.size()}}};
    offset += tensor.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' '); // the data starts 8-byte aligned
  uint64_t length = text.size();
  std::vector<std::string_view> parts = {
      std::string_view(reinterpret_cast<const char *>(&length), 8), text};
  for (const SafetensorsWrite &tensor : tensors)
    parts.push_back(tensor.bytes);
  return writeFileAtomically(path, parts, who);
}

} // namespace sinter::runtime
