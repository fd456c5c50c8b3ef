//===- Status.cpp - the runtime's error values ----------------------------===//
#include "sinter/runtime/Status.h"

#include "absl/strings/str_cat.h"

namespace sinter {

Status withLocation(Status status, std::string_view file, int line) {
  if (status.ok())
    return status;
  // Keep only the path below the project root when the file is inside it.
  std::string_view shown = file;
  for (std::string_view root : {"/runtime/", "/frontends/", "/compiler/", "/kernels/"}) {
    if (auto pos = file.rfind(root); pos != std::string_view::npos) {
      shown = file.substr(pos + 1);
      break;
    }
  }
  return Status(status.code(), absl::StrCat(std::string(shown), ":", line, ": ", status.message()));
}

} // namespace sinter
