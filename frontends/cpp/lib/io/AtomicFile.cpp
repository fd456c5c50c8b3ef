//===- AtomicFile.cpp - write beside, flush, rename over ------------------===//
#include "sinter/io/AtomicFile.h"
#include "../Format.h"
#include "sinter/Error.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace sinter::io {
namespace {

void writeAll(int fd, std::string_view bytes, const char *who, const std::string &path,
              std::source_location loc) {
  while (!bytes.empty()) {
    ssize_t wrote = ::write(fd, bytes.data(), bytes.size());
    if (wrote < 0 && errno == EINTR)
      continue;
    SINTER_CHECK(
        wrote > 0, loc,
        cat(who, ": writing ", path, " failed: ", std::strerror(wrote < 0 ? errno : ENOSPC)));
    bytes.remove_prefix(static_cast<size_t>(wrote));
  }
}

/// Removes `<name>.tmp.<pid>` files in `folder` whose process is gone.
void removeStaleTemporaries(const std::filesystem::path &folder, const std::string &name) {
  std::error_code error;
  std::string stale = name + ".tmp.";
  for (const auto &entry : std::filesystem::directory_iterator(folder, error)) {
    std::string file = entry.path().filename().string();
    if (file.rfind(stale, 0) != 0)
      continue;
    char *end = nullptr;
    long pid = std::strtol(file.c_str() + stale.size(), &end, 10);
    if (*end == '\0' && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      std::filesystem::remove(entry.path(), error);
  }
}

} // namespace

void write_file_atomically(const std::string &path, const std::vector<std::string_view> &parts,
                           const char *who, std::source_location loc) {
  std::filesystem::path target(path);
  std::filesystem::path folder = target.parent_path().empty() ? "." : target.parent_path();
  std::string temporary = cat(path, ".tmp.", ::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  SINTER_CHECK(fd >= 0, loc, cat(who, ": cannot create ", temporary, ": ", std::strerror(errno)));
  try {
    for (std::string_view part : parts)
      writeAll(fd, part, who, temporary, loc);
    SINTER_CHECK(::fsync(fd) == 0, loc,
                 cat(who, ": flushing ", temporary, " failed: ", std::strerror(errno)));
    int closed = ::close(fd);
    fd = -1;
    SINTER_CHECK(closed == 0, loc,
                 cat(who, ": writing ", temporary, " failed: ", std::strerror(errno)));
  } catch (...) {
    if (fd >= 0)
      ::close(fd);
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
  }
  SINTER_CHECK(!error, loc,
               cat(who, ": cannot rename ", temporary, " to ", path, ": ", error.message()));
  removeStaleTemporaries(folder, target.filename().string());
  // The rename itself reaches the disk with the folder's entry.
  int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

} // namespace sinter::io
