//===- Safetensors.h - reading and writing safetensors files ---*- C++ -*-===//
//
// The safetensors format (as Hugging Face's `safetensors` library writes it):
// an 8-byte little-endian header length, a JSON header mapping each tensor's
// name to its dtype, shape and byte range (plus an optional "__metadata__"
// object of string values), then the tensors' bytes, row-major and
// little-endian. Checkpoints of `sinter-train` are such files, so other
// tools read them as they are.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_IO_SAFETENSORS_H
#define SINTER_IO_SAFETENSORS_H

#include "sinter/Tensor.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sinter::io {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct SafetensorsFile {
  NamedTensors tensors; ///< In the order of their bytes in the file.
  std::map<std::string, std::string> metadata;
  /// The tensor called `name`; throws sinter::Error naming the file's
  /// tensors when there is none.
  const Tensor &at(const std::string &name, Loc loc = Loc::current()) const;
};

/// Writes `tensors` (f32, i32, i64 or bool; names unique and non-empty) and
/// `metadata` to `path` atomically: the bytes go to a temporary file in the
/// same folder, which is flushed to disk and then renamed over `path`, so a
/// crash mid-write leaves the previous file intact. Reading the tensors'
/// values computes them (pending lazy work runs first).
void save_safetensors(const std::string &path, const NamedTensors &tensors,
                      const std::map<std::string, std::string> &metadata = {},
                      Loc loc = Loc::current());

/// Reads a safetensors file: F32, F64 (as f32), I32, I64, BOOL, U8 and U16
/// (as i32). A truncated or malformed file, an unknown dtype, or byte ranges
/// that do not tile the data are errors naming the file and the problem.
SafetensorsFile load_safetensors(const std::string &path, Loc loc = Loc::current());

} // namespace sinter::io

#endif // SINTER_IO_SAFETENSORS_H
