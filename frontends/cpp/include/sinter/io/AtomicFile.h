//===- AtomicFile.h - files that a crash or a full disk never tears -*- C++ -*-===//
#ifndef SINTER_IO_ATOMICFILE_H
#define SINTER_IO_ATOMICFILE_H

#include <source_location>

#include <string>
#include <string_view>
#include <vector>

namespace sinter::io {

/// Writes `parts` one after the other to `path` atomically: to a temporary
/// file beside it (`<path>.tmp.<pid>`), flushed to disk, then renamed over
/// `path`, and the folder flushed. A process killed at any moment leaves
/// either the old file or the new one; a write that fails (a full disk, a
/// folder that is not writable) throws sinter::Error naming `who`, the file
/// and the system's reason, removes the temporary file, and leaves the old
/// file as it was. Temporary files of writers that died are removed.
void write_file_atomically(const std::string &path, const std::vector<std::string_view> &parts,
                           const char *who,
                           std::source_location loc = std::source_location::current());

} // namespace sinter::io

#endif // SINTER_IO_ATOMICFILE_H
