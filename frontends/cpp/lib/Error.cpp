//===- Error.cpp - the one exception type of the public API ---------------===//
#include "sinter/Error.h"

#include "Format.h"

namespace sinter {

Error::Error(const std::string &message, std::source_location where)
    : std::runtime_error(cat(where.file_name(), ":", where.line(), ": ", message)),
      message_(message), where_(where) {}

void throwError(const std::string &message, std::source_location where) {
  throw Error(message, where);
}

} // namespace sinter
