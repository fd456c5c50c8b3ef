//===- Shape.cpp - tensor shapes ------------------------------------------===//
#include "sinter/Shape.h"

namespace sinter {

int64_t numel(const Shape &shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

std::string toString(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

} // namespace sinter
