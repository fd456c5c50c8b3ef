//===- Shape.h - tensor shapes --------------------------------------------===//
#ifndef SINTER_SHAPE_H
#define SINTER_SHAPE_H

#include <cstdint>
#include <string>
#include <vector>

namespace sinter {

/// A tensor's sizes, outermost first (row-major). A scalar has shape {}.
using Shape = std::vector<int64_t>;

/// The number of elements of a tensor of this shape (1 for a scalar).
int64_t numel(const Shape &shape);

/// "[2, 3]", as shapes appear in error messages.
std::string toString(const Shape &shape);

} // namespace sinter

#endif // SINTER_SHAPE_H
