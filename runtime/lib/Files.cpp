//===- Files.cpp - read whole; write beside, flush, rename over ----------===//
#include "sinter/runtime/Files.h"
#include "sinter/runtime/Environment.h"

#include "absl/strings/str_cat.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace sinter::runtime {
namespace {

/// Note [Faults for tests]
/// Two faults that tests of crash safety need on any machine, by variables
/// no user sets: SINTER_TEST_WRITE_LIMIT makes atomic writes fail once the
/// process has written that many bytes through them, as a full disk does
/// (ENOSPC), without a small file system to fill (which needs a mount
/// namespace, not available in many containers); SINTER_TEST_KILL_BEFORE_
/// RENAME=N kills the process in its N-th atomic write between the
/// temporary's flush and the rename, the one moment a crash leaves a whole
/// temporary beside the old file.
std::atomic<int64_t> bytesWritten{0}, atomicWrites{0};

/// writeAll for an atomic write, under the test fault's limit.
Status writeLimited(int fd, std::string_view bytes, const char *who, const std::string &path) {
  if (int64_t limit = environment().test_write_limit; limit > 0) {
    auto size = static_cast<int64_t>(bytes.size());
    int64_t before = bytesWritten.fetch_add(size);
    if (before + size > limit) {
      bytesWritten.fetch_sub(size);
      return absl::ResourceExhaustedError(
          absl::StrCat(who, ": writing ", path, " failed: ", std::strerror(ENOSPC)));
    }
  }
  return writeAll(fd, bytes, who, path);
}

/// Removes `<name>.tmp.<pid>.<n>` files (and `<name>.tmp.<pid>`, the name
/// older writers used) in `folder` whose process is gone.
void removeStaleTemporaries(const std::filesystem::path &folder, const std::string &name) {
  std::error_code error;
  std::string stale = name + ".tmp.";
  for (const auto &entry : std::filesystem::directory_iterator(folder, error)) {
    std::string file = entry.path().filename().string();
    if (file.rfind(stale, 0) != 0)
      continue;
    char *end = nullptr;
    long pid = std::strtol(file.c_str() + stale.size(), &end, 10);
    if ((*end == '.' || *end == '\0') && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 &&
        errno == ESRCH)
      std::filesystem::remove(entry.path(), error);
  }
}

} // namespace

Status writeAll(int fd, std::string_view bytes, const char *who, const std::string &path) {
  while (!bytes.empty()) {
    ssize_t wrote = ::write(fd, bytes.data(), bytes.size());
    if (wrote < 0 && errno == EINTR)
      continue;
    if (wrote <= 0)
      return absl::ResourceExhaustedError(absl::StrCat(
          who, ": writing ", path, " failed: ", std::strerror(wrote < 0 ? errno : ENOSPC)));
    bytes.remove_prefix(static_cast<size_t>(wrote));
  }
  return absl::OkStatus();
}

StatusOr<std::string> readWholeFile(const std::string &path, const char *who) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    return absl::InvalidArgumentError(absl::StrCat(who, ": ", path, " is a folder, not a file"));
  std::ifstream in(path, std::ios::binary);
  if (!in.good())
    return absl::NotFoundError(absl::StrCat(who, ": cannot open ", path));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Status writeFileAtomically(const std::string &path, const std::vector<std::string_view> &parts,
                           const char *who) {
  std::filesystem::path target(path);
  std::filesystem::path folder = target.parent_path().empty() ? "." : target.parent_path();
  // One name per write: threads of one process may write the same path at
  // once (two sessions saving to one file), and each renames whole bytes.
  static std::atomic<uint64_t> writes{0};
  std::string temporary = absl::StrCat(path, ".tmp.", ::getpid(), ".", writes.fetch_add(1));
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return absl::PermissionDeniedError(
        absl::StrCat(who, ": cannot create ", temporary, ": ", std::strerror(errno)));
  Status written = absl::OkStatus();
  for (std::string_view part : parts) {
    written = writeLimited(fd, part, who, temporary);
    if (!written.ok())
      break;
  }
  if (written.ok() && ::fsync(fd) != 0)
    written = absl::ResourceExhaustedError(
        absl::StrCat(who, ": flushing ", temporary, " failed: ", std::strerror(errno)));
  int closed = ::close(fd);
  if (written.ok() && closed != 0)
    written = absl::ResourceExhaustedError(
        absl::StrCat(who, ": writing ", temporary, " failed: ", std::strerror(errno)));
  if (written.ok() && atomicWrites.fetch_add(1) + 1 == environment().test_kill_before_rename)
    ::raise(SIGKILL);
  std::error_code error;
  if (written.ok())
    std::filesystem::rename(temporary, target, error);
  if (!written.ok() || error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
  }
  SINTER_RETURN_IF_ERROR(written);
  if (error)
    return absl::PermissionDeniedError(
        absl::StrCat(who, ": cannot rename ", temporary, " to ", path, ": ", error.message()));
  removeStaleTemporaries(folder, target.filename().string());
  // The rename itself reaches the disk with the folder's entry.
  int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return absl::OkStatus();
}

} // namespace sinter::runtime
