//===- Safetensors.h - safetensors files, read and written by the runtime -*- C++ -*-===//
//
// The safetensors format (as Hugging Face's `safetensors` library writes it):
// an 8-byte little-endian header length, a JSON header mapping each tensor's
// name to its dtype, shape and byte range (plus an optional "__metadata__"
// object of string values), then the tensors' bytes, row-major and
// little-endian. This is the format's one reader and writer: the C++ API's
// io::load_safetensors and io::save_safetensors make Tensors of what it
// reads, and a runtime with no frontend (an ahead-of-time artifact's
// session) loads and saves parameters and optimizer state with it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_SAFETENSORS_H
#define SINTER_RUNTIME_SAFETENSORS_H

#include "sinter/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sinter::runtime {

/// One tensor of a file: its name, the file's dtype ("F32", "F64", "I32",
/// "I64", "BOOL", "U8", "U16"), shape and byte range in the data.
struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

/// A parsed file: its bytes, its tensors in the order of their bytes, its
/// metadata.
struct Safetensors {
  std::string bytes;
  uint64_t dataStart = 0;
  std::vector<SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;
  /// The bytes of `tensor` (one of `tensors`).
  std::string_view data(const SafetensorsTensor &tensor) const {
    return std::string_view(bytes).substr(dataStart + tensor.begin, tensor.end - tensor.begin);
  }
  /// The tensor called `name`, or null.
  const SafetensorsTensor *find(std::string_view name) const;
};

/// Bytes per element of a file's dtype, or 0 for one Sinter does not read.
uint64_t safetensorsElementBytes(std::string_view dtype);

/// Parses a file's bytes. A truncated or malformed file, an unknown dtype,
/// a shape whose size overflows, or byte ranges that do not tile the data
/// are refused with what is wrong ("tensor 'x' has bytes [0, 16) outside
/// the 8 bytes of data (truncated file?)"); the caller adds the file's name.
StatusOr<Safetensors> parseSafetensors(std::string bytes);

/// A tensor to write: its name, the file's dtype, its shape and its bytes.
struct SafetensorsWrite {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string_view bytes;
};

/// Writes `tensors` and `metadata` to `path` atomically
/// (writeFileAtomically, sinter/runtime/Files.h). Refuses an empty or
/// repeated name, an unknown dtype and bytes that are not the shape's.
Status writeSafetensors(const std::string &path, const std::vector<SafetensorsWrite> &tensors,
                        const std::map<std::string, std::string> &metadata, const char *who);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_SAFETENSORS_H
