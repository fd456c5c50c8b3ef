//===- ReadFile.h - a whole file's bytes -----------------------*- C++ -*-===//
#ifndef SINTER_LIB_IO_READFILE_H
#define SINTER_LIB_IO_READFILE_H

#include "../Format.h"
#include "sinter/Error.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <source_location>
#include <string>

namespace sinter::io {

/// The bytes of `path`; throws sinter::Error "<who>: cannot open <path>" at
/// `loc` when it cannot be read.
inline std::string readFile(const std::string &path, const char *who, std::source_location loc) {
  std::error_code error;
  SINTER_CHECK(!std::filesystem::is_directory(path, error), loc,
               cat(who, ": ", path, " is a folder, not a file"));
  std::ifstream in(path, std::ios::binary);
  SINTER_CHECK(in.good(), loc, cat(who, ": cannot open ", path));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace sinter::io

#endif // SINTER_LIB_IO_READFILE_H
