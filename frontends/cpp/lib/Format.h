//===- Format.h - building error messages ---------------------------------===//
#ifndef SINTER_LIB_FORMAT_H
#define SINTER_LIB_FORMAT_H

#include <sstream>
#include <string>

namespace sinter {

/// Concatenates anything an ostream prints (numbers, strings, string_views).
template <typename... Args> std::string cat(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

} // namespace sinter

#endif // SINTER_LIB_FORMAT_H
