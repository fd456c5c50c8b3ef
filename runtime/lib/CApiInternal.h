//===- CApiInternal.h - what the C API's entry points share -----*- C++ -*-===//
//
// The handles and the error reporting of the C API (sinter/runtime/c_api.h),
// shared by libsinter_runtime's entry points (CApi.cpp) and those of
// libsinter_collectives (CApiDistributed.cpp: the process group, which
// needs Gloo).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_LIB_CAPIINTERNAL_H
#define SINTER_RUNTIME_LIB_CAPIINTERNAL_H

#include "sinter/runtime/ProcessGroup.h"
#include "sinter/runtime/Status.h"
#include "sinter/runtime/c_api.h"

#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>

struct sinter_process_group {
  std::unique_ptr<sinter::runtime::ProcessGroup> group;
};

namespace sinter::runtime::c_api {

/// Sets the calling thread's message for its last failure; returns `code`.
int fail(int code, std::string message);
/// SINTER_OK, or the code of `status` with its message (after `call` and
/// ": " when `call` is given) as the last failure.
int report(const absl::Status &status, std::string_view call = {});
int nullArgument(const char *call, const char *what);

/// Runs one entry point's body: no exception crosses into C (a failed
/// allocation, a filesystem error), each becomes an error code.
template <typename Body> int guarded(const char *call, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(SINTER_ERROR_RESOURCE_EXHAUSTED, std::string(call) + ": out of memory");
  } catch (const std::exception &error) {
    return fail(SINTER_ERROR_INTERNAL, std::string(call) + ": " + error.what());
  }
}

} // namespace sinter::runtime::c_api

#endif // SINTER_RUNTIME_LIB_CAPIINTERNAL_H
