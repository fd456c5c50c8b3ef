//===- Factories.cpp - tensors made from values and constants -------------===//
#include "Step.h"
#include "TensorImpl.h"
#include "sinter/Error.h"
#include "sinter/Session.h"

#include "Format.h"

#include <type_traits>

namespace sinter {
namespace {

template <typename T> DType dtypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return DType::boolean;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::i32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::i64;
  else
    return DType::f32;
}

} // namespace

void detail::checkShape(const char *op, const Shape &shape, Loc loc) {
  for (int64_t size : shape)
    SINTER_CHECK(size >= 0, loc, cat(op, ": negative size in shape ", toString(shape)));
}

template <typename T>
Tensor from_vector(const std::vector<T> &values, const Shape &shape, std::optional<DType> dtype,
                   Loc loc) {
  for (int64_t size : shape)
    SINTER_CHECK(size >= 0, loc, "from_vector: negative size in shape " + toString(shape));
  SINTER_CHECK(static_cast<int64_t>(values.size()) == numel(shape), loc,
               cat("from_vector: ", values.size(), " values cannot fill shape ", toString(shape),
                   " (", numel(shape), " elements)"));
  DType type = dtype.value_or(dtypeOf<T>());
  std::vector<double> elements;
  elements.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    elements.push_back(detail::roundTo(type, static_cast<double>(values[i])));
  auto value = std::make_shared<lazy::Value>(std::move(elements), type);
  return detail::fromValue(std::move(value), shape, type, Session::current(loc).device(), loc);
}

#define SINTER_INSTANTIATE(T)                                                                      \
  template Tensor from_vector<T>(const std::vector<T> &, const Shape &, std::optional<DType>, Loc);
SINTER_ELEMENT_TYPES(SINTER_INSTANTIATE)
#undef SINTER_INSTANTIATE

Tensor full(const Shape &shape, double value, DType dtype, Loc loc) {
  detail::checkShape("full", shape, loc);
  lazy::Attrs attrs;
  attrs.value = detail::roundTo(dtype, value);
  return detail::record(lazy::Op::Full, std::move(attrs), {}, shape, dtype,
                        Session::current(loc).device(), loc);
}

Tensor zeros(const Shape &shape, DType dtype, Loc loc) { return full(shape, 0.0, dtype, loc); }
Tensor ones(const Shape &shape, DType dtype, Loc loc) { return full(shape, 1.0, dtype, loc); }

} // namespace sinter
