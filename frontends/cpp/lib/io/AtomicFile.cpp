//===- AtomicFile.cpp - the runtime's atomic write, as the API throws ----===//
#include "sinter/io/AtomicFile.h"
#include "sinter/Error.h"
#include "sinter/runtime/Files.h"

namespace sinter::io {

void write_file_atomically(const std::string &path, const std::vector<std::string_view> &parts,
                           const char *who, std::source_location loc) {
  Status written = runtime::writeFileAtomically(path, parts, who);
  SINTER_CHECK(written.ok(), loc, std::string(written.message()));
}

} // namespace sinter::io
