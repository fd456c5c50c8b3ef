//===- JobOutput.h - what a job writes: folders, metrics, progress -*- C++ -*-===//
//
// The files and lines a zoo job leaves: its output folder, metrics.jsonl
// (whole rows only, kept up to a resumed checkpoint's step), the loss curve
// drawn by gnuplot, and a progress line that redraws itself on a terminal.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TOOLS_TRAIN_JOBOUTPUT_H
#define SINTER_TOOLS_TRAIN_JOBOUTPUT_H

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace sinter::tools {

using Clock = std::chrono::steady_clock;

/// Seconds from `start` to now.
double secondsSince(Clock::time_point start);
/// `bytes` in MiB.
double mib(int64_t bytes);

/// Creates `dir` and its parents, or throws JobError(key) saying why not.
void createFolder(const std::string &dir, const std::string &key);

/// metrics.jsonl: one JSON object per line, flushed as written; none at an
/// empty path (the ranks other than 0 of a data-parallel job).
class MetricsLog {
public:
  /// Opens `path`, keeping the rows up to step `keepUpTo` of a resumed job
  /// (a row torn by a crash does not parse and goes), written anew
  /// atomically: a job killed now still leaves them. Throws JobError.
  MetricsLog(const std::string &path, int64_t keepUpTo);
  MetricsLog(const MetricsLog &) = delete;
  MetricsLog &operator=(const MetricsLog &) = delete;
  ~MetricsLog();
  /// Appends the row in one write (a crash leaves whole rows and at most
  /// one torn last row, which a resume drops).
  void write(const nlohmann::json &row);
  /// The rows so far on disk: before a checkpoint, which a resume trusts
  /// them to agree with.
  void sync();
  const std::string &path() const { return path_; }

private:
  std::string path_;
  int fd_ = -1;
};

/// Draws the loss curve of `metrics` (train and the `split` rows) with
/// gnuplot (Debian's gnuplot-nox), run without a shell in `dir` (so that no
/// character of the folder's name can reach a command line); returns the
/// PNG's path, or an empty string (with the reason printed) without it.
std::string plotLoss(const std::string &dir, const std::string &metrics, const std::string &split);

/// One line that redraws itself on a terminal; plain lines in a log.
class Progress {
public:
  /// `total` steps; a line every `every` steps (and at the last).
  Progress(int64_t total, int64_t every);
  void update(int64_t step, int64_t epoch, double loss, double lr, double samplesPerSecond,
              double eta);

private:
  int64_t total_, every_;
  bool tty_;
  Clock::time_point start_ = Clock::now();
  double drawn_ = -1;
};

} // namespace sinter::tools

#endif // SINTER_TOOLS_TRAIN_JOBOUTPUT_H
