//===- DType.cpp - element types of tensors -------------------------------===//
#include "sinter/DType.h"

#include "sinter/Error.h"

#include "Format.h"

#include <array>
#include <utility>

namespace sinter {

std::string_view name(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return "f32";
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  case DType::i32:
    return "i32";
  case DType::i64:
    return "i64";
  case DType::boolean:
    return "bool";
  }
  return "<invalid dtype>";
}

std::size_t elementSize(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return 4;
  case DType::f16:
    return 2;
  case DType::bf16:
    return 2;
  case DType::i32:
    return 4;
  case DType::i64:
    return 8;
  case DType::boolean:
    return 1;
  }
  return 0;
}

bool isFloatingPoint(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16;
}

std::optional<DType> parseDType(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, DType>, 15> kNames = {{
      {"f32", DType::f32},
      {"float32", DType::f32},
      {"float", DType::f32},
      {"f16", DType::f16},
      {"float16", DType::f16},
      {"half", DType::f16},
      {"bf16", DType::bf16},
      {"bfloat16", DType::bf16},
      {"i32", DType::i32},
      {"int32", DType::i32},
      {"int", DType::i32},
      {"i64", DType::i64},
      {"int64", DType::i64},
      {"long", DType::i64},
      {"bool", DType::boolean},
  }};
  for (const auto &[spelling, dtype] : kNames)
    if (spelling == text)
      return dtype;
  if (text == "i1")
    return DType::boolean;
  return std::nullopt;
}

DType dtypeFromString(std::string_view text, std::source_location where) {
  std::optional<DType> dtype = parseDType(text);
  SINTER_CHECK(dtype.has_value(), where,
               cat("unknown dtype '", std::string(text),
                   "'; expected one of f32, f16, bf16, i32, i64, bool"));
  return *dtype;
}

} // namespace sinter
