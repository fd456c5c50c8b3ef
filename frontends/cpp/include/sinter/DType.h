//===- DType.h - element types of tensors ---------------------------------===//
#ifndef SINTER_DTYPE_H
#define SINTER_DTYPE_H

#include <cstddef>
#include <optional>
#include <source_location>
#include <string_view>

namespace sinter {

/// The element types a tensor can hold; the same set as the `sinter` dialect's
/// tensors (f32, f16, bf16, i32, i64, i1).
enum class DType { f32, f16, bf16, i32, i64, boolean };

/// The name used in messages and in the IR: "f32", "f16", "bf16", "i32",
/// "i64", "bool".
std::string_view name(DType dtype);

/// Bytes per element (a bool takes one byte in memory).
std::size_t elementSize(DType dtype);

/// True for f32, f16 and bf16.
bool isFloatingPoint(DType dtype);

/// Parses a name as printed by name(), also accepting PyTorch's spellings
/// ("float32", "float", "float16", "half", "bfloat16", "int32", "int",
/// "int64", "long", "bool", "i1"); nullopt for anything else.
std::optional<DType> parseDType(std::string_view text);

/// Like parseDType, but throws sinter::Error naming the bad text and the
/// accepted names, at the caller's line.
DType dtypeFromString(std::string_view text,
                      std::source_location where = std::source_location::current());

} // namespace sinter

#endif // SINTER_DTYPE_H
