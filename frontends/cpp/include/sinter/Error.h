//===- Error.h - the one exception type of the public API -----------------===//
//
// User errors (a wrong shape, dtype or device) are thrown as sinter::Error,
// whose message names the problem and the user's file:line. Internal
// invariants use SINTER_ASSERT, which is for Sinter's own bugs, not for input.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_ERROR_H
#define SINTER_ERROR_H

#include <source_location>
#include <stdexcept>
#include <string>

namespace sinter {

/// The exception every user-facing call throws on bad input. what() reads
/// "file:line: message", where file:line is the user's call.
class Error : public std::runtime_error {
public:
  Error(const std::string &message, std::source_location where);

  /// The message without the location prefix.
  const std::string &message() const { return message_; }
  /// The user's source location the error was raised for.
  const std::source_location &where() const { return where_; }

private:
  std::string message_;
  std::source_location where_;
};

/// Throws sinter::Error(message, where). Out of line to keep call sites small.
[[noreturn]] void throwError(const std::string &message, std::source_location where);

} // namespace sinter

/// SINTER_CHECK(cond, where, message): throws sinter::Error at the user's
/// location `where` when `cond` is false. `message` is any expression
/// convertible to std::string and is only evaluated on failure.
#define SINTER_CHECK(cond, where, message)                                                         \
  do {                                                                                             \
    if (!(cond)) [[unlikely]]                                                                      \
      ::sinter::throwError((message), (where));                                                    \
  } while (false)

#endif // SINTER_ERROR_H
