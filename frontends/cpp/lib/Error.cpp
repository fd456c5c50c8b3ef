//===- Error.cpp - the one exception type of the public API ---------------===//
#include "sinter/Error.h"

#include "absl/strings/str_cat.h"

namespace sinter {

Error::Error(const std::string &message, std::source_location where)
    : std::runtime_error(absl::StrCat(where.file_name(), ":", where.line(), ": ", message)),
      message_(message), where_(where) {}

void throwError(const std::string &message, std::source_location where) {
  throw Error(message, where);
}

} // namespace sinter
