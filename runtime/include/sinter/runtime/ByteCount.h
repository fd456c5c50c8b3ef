//===- ByteCount.h - byte counts as people write and read them ----*- C++ -*-===//
#ifndef SINTER_RUNTIME_BYTECOUNT_H
#define SINTER_RUNTIME_BYTECOUNT_H

#include <cstdint>
#include <string>

namespace sinter::runtime {

/// Parses a positive byte count with an optional binary suffix: "4096",
/// "256MiB", "2GiB" (also K, M, G). Returns -1 when `text` is not one.
int64_t parseByteCount(const std::string &text);

/// "512 bytes", "3.5 KiB", "240.0 MiB": a byte count for messages.
std::string formatByteCount(int64_t bytes);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_BYTECOUNT_H
