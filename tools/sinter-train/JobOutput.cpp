//===- JobOutput.cpp - what a job writes: folders, metrics, progress ------===//
#include "JobOutput.h"

#include "Checkpoint.h"
#include "Job.h"

#include "sinter/runtime/Files.h"
#include "sinter/sinter.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace sinter::tools {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string clockTime(double seconds) {
  auto s = static_cast<int64_t>(std::lround(seconds));
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(s / 60),
                static_cast<long long>(s % 60));
  return text;
}

/// `text` as a gnuplot single-quoted string (a quote doubled).
std::string gnuplotQuoted(const std::string &text) {
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

} // namespace

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

void createFolder(const std::string &dir, const std::string &key) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir, error))
    throw JobError(key, "cannot create the folder " + dir + ": " +
                            (error ? error.message() : "a file of that name is in the way"));
}

MetricsLog::MetricsLog(const std::string &path, int64_t keepUpTo) : path_(path) {
  if (path.empty())
    return;
  std::string kept;
  if (keepUpTo > 0) {
    std::ifstream in(path, std::ios::binary);
    kept = keptMetricsRows(std::string(std::istreambuf_iterator<char>(in), {}), keepUpTo);
  }
  try {
    io::write_file_atomically(path, {kept}, "metrics log");
  } catch (const sinter::Error &error) {
    throw JobError("output_dir", std::string("cannot write ") + path + ": " + error.message());
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0)
    throw JobError("output_dir", "cannot write " + path + ": " + std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (fd_ >= 0)
    ::close(fd_);
}

void MetricsLog::write(const nlohmann::json &row) {
  if (path_.empty())
    return;
  if (Status written = runtime::writeAll(fd_, row.dump() + "\n", "metrics log", path_);
      !written.ok())
    throw JobError("output_dir", std::string(written.message()));
}

void MetricsLog::sync() {
  if (fd_ >= 0 && ::fsync(fd_) != 0)
    throw JobError(path_, std::string("flushing the metrics failed: ") + std::strerror(errno));
}

std::string plotLoss(const std::string &dir, const std::string &metrics, const std::string &split) {
  std::ifstream in(metrics);
  const std::string heldName = "loss_" + split + ".tsv";
  std::ofstream train(dir + "/loss_train.tsv"), held(dir + "/" + heldName);
  for (std::string line; std::getline(in, line);) {
    json row = json::parse(line, nullptr, false);
    if (!row.is_object() || !row.contains("loss") || !row["loss"].is_number() ||
        !row.contains("step") || !row["step"].is_number_integer() || !row.contains("split"))
      continue;
    (row["split"] == "train" ? train : held)
        << row["step"].get<int64_t>() << "\t" << row["loss"].get<double>() << "\n";
  }
  train.close();
  held.close();
  std::string script = dir + "/loss.gnuplot", png = dir + "/loss.png";
  std::ofstream(script) << "set terminal pngcairo size 900,500\n"
                        << "set output 'loss.png'\n"
                        << "set xlabel 'step'\nset ylabel 'loss'\nset grid\nset key top right\n"
                        << "plot 'loss_train.tsv' using 1:2 with lines lw 1 title 'train', "
                        << gnuplotQuoted(heldName) << " using 1:2 with linespoints lw 2 pt 7 title "
                        << gnuplotQuoted(split) << "\n";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  std::string program = "gnuplot", argument = "loss.gnuplot";
  char *argv[] = {program.data(), argument.data(), nullptr};
  pid_t pid = -1;
  int spawned = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == ENOENT) {
    std::printf("loss curve: gnuplot is not installed (apt-get install gnuplot-nox); the data is "
                "in %s/loss_*.tsv\n",
                dir.c_str());
    return "";
  }
  int status = 0;
  bool ran = spawned == 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
             WEXITSTATUS(status) == 0;
  if (!ran || !fs::exists(png)) {
    std::printf("loss curve: gnuplot failed on %s\n", script.c_str());
    return "";
  }
  return png;
}

Progress::Progress(int64_t total, int64_t every)
    : total_(total), every_(every), tty_(isatty(1) != 0) {}

void Progress::update(int64_t step, int64_t epoch, double loss, double lr, double samplesPerSecond,
                      double eta) {
  bool due = step % every_ == 0 || step == total_;
  double now = secondsSince(start_);
  if (!(due || (tty_ && now - drawn_ > 0.1)))
    return;
  drawn_ = now;
  char line[200];
  std::snprintf(
      line, sizeof line, "step %lld/%lld  epoch %lld  loss %.4f  lr %.2e  %.0f samples/s  ETA %s",
      static_cast<long long>(step), static_cast<long long>(total_),
      static_cast<long long>(epoch + 1), loss, lr, samplesPerSecond, clockTime(eta).c_str());
  if (tty_)
    std::printf("\r\033[K%s%s", line, due ? "\n" : "");
  else
    std::printf("%s\n", line);
  std::fflush(stdout);
}

} // namespace sinter::tools
