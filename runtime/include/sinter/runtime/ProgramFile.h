//===- ProgramFile.h - a Program as a file, and its reader -------*- C++ -*-===//
//
// Note [The Program as a file]
// A compiled step leaves the process that compiled it as a JSON document
// (nlohmann-json, Debian's nlohmann-json3-dev, header-only: the runtime
// gains no shared library). JSON over a binary format (FlatBuffers,
// protobuf, Cap'n Proto): a Program is small beside the kernels and weights
// an artifact carries (gpt-mini's training step is about 1 MiB of text,
// read in milliseconds), a person can read and diff it, every language
// embedding the runtime parses it without generated code, and the one
// library is already a dependency. The document holds everything a run
// needs and nothing it does not: the buffers, the steps in order (Note [One
// list of steps] in Program.h), the signature (Note [The step's signature])
// and, apart under "report", what the plan says of memory.
//
//   {"format": "sinter-program", "version": 1,
//    "library": "...", "kernel_prefix": "sinter_kernel_", "arena_bytes": N,
//    "buffers": [{"bytes", "offset", "phase", "floating"}, ...],
//    "steps": [{"kind": "kernel"|"gemm"|"fill"|"copy", ...}, ...],
//    "arguments": [buffer...], "results": [buffer...],
//    "donors": [argument or -1...], "in_arena": [bool...],
//    "signature": {"arguments": [{"name", "role", "dtype", "shape"}...],
//                  "results": [...]},
//    "report": {...}}
//
// docs/AOT.md lists every key. The reader refuses, with a Status naming the
// file and the first thing wrong (the key's path: `steps[3].inputs[1]`):
// bytes that are not JSON, another format, a version this reader does not
// know (a newer one says to update Sinter), a missing key or one of the
// wrong type, a number outside its range, and every Program that
// validateProgram refuses (an index past its list, a fill of no element, a
// copy of another buffer, a signature that does not match its buffers).
// Keys it does not know are ignored. It allocates only what the document
// holds, never what it claims.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_PROGRAMFILE_H
#define SINTER_RUNTIME_PROGRAMFILE_H

#include "sinter/runtime/Program.h"
#include "sinter/runtime/Status.h"

#include <string>
#include <string_view>

namespace sinter::runtime {

/// The format's name and the version this Sinter writes and reads.
inline constexpr const char kProgramFormat[] = "sinter-program";
/// Version 2: a buffer's floats ("floats": none, f32, f16, bf16) where
/// version 1 said whether it held f32 ("floating"); both are read.
inline constexpr int kProgramFormatVersion = 2;

/// `program` as a JSON document (Note [The Program as a file]).
/// REQUIRES: validateProgram(program) is ok.
std::string writeProgram(const Program &program);

/// The Program a document holds, validated; refusals name `origin` (the
/// file's path) and the key at fault.
StatusOr<Program> readProgram(std::string_view text, std::string_view origin);

/// readProgram of the file at `path` (refused when it is missing, a folder,
/// unreadable, or over 1 GiB).
StatusOr<Program> readProgramFile(const std::string &path);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_PROGRAMFILE_H
