//===- Files.h - whole files read, and written so a crash never tears them -*- C++ -*-===//
#ifndef SINTER_RUNTIME_FILES_H
#define SINTER_RUNTIME_FILES_H

#include "sinter/runtime/Status.h"

#include <string>
#include <string_view>
#include <vector>

namespace sinter::runtime {

/// The bytes of the file at `path`; a Status "<who>: PATH is a folder, not a
/// file" or "<who>: cannot open PATH" when it cannot be read.
StatusOr<std::string> readWholeFile(const std::string &path, const char *who);

/// Writes `parts` one after the other to `path` atomically: to a temporary
/// file beside it (`<path>.tmp.<pid>.<n>`, one per write: threads may
/// write one path at once and each renames whole bytes), flushed to disk, then renamed over
/// `path`, and the folder flushed. A process killed at any moment leaves
/// either the old file or the new one; a write that fails (a full disk, a
/// folder that is not writable) returns a Status naming `who`, the file
/// and the system's reason, removes the temporary file, and leaves the old
/// file as it was. Temporary files of writers that died are removed.
Status writeFileAtomically(const std::string &path, const std::vector<std::string_view> &parts,
                           const char *who);

/// Writes all of `bytes` to `fd` (the file at `path`), again after an
/// interruption or a short write; a failure names `who`, the file and the
/// system's reason (a write of nothing: a full disk).
Status writeAll(int fd, std::string_view bytes, const char *who, const std::string &path);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_FILES_H
