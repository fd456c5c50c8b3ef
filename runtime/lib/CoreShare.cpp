//===- CoreShare.cpp - sizing OpenMP teams to the cores nobody else wants -===//
#include "sinter/runtime/CoreShare.h"

#include "sinter/runtime/Environment.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>

namespace sinter::runtime {
namespace {

using Clock = std::chrono::steady_clock;

/// The cgroup CPU quota in cores (quota / period), or 0 when none is set.
double cgroupQuota() {
  std::ifstream groups("/proc/self/cgroup");
  std::string line;
  while (std::getline(groups, line)) {
    // "0::/path" (v2) or "4:cpu,cpuacct:/path" (v1).
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    // Inside a container the group's files are often at the root.
    for (const std::string &dir : {"/sys/fs/cgroup" + path, std::string("/sys/fs/cgroup")}) {
      if (controllers.empty()) {
        std::ifstream max(dir + "/cpu.max");
        std::string quota;
        double period = 0;
        if (max >> quota >> period && quota != "max" && period > 0)
          return std::atof(quota.c_str()) / period;
      } else if (("," + controllers + ",").find(",cpu,") != std::string::npos) {
        for (const std::string &v1 : {dir, "/sys/fs/cgroup/" + controllers}) {
          std::ifstream quotaFile(v1 + "/cpu.cfs_quota_us"), periodFile(v1 + "/cpu.cfs_period_us");
          double quota = 0, period = 0;
          if (quotaFile >> quota && periodFile >> period && quota > 0 && period > 0)
            return quota / period;
        }
      }
    }
  }
  return 0;
}

/// The machine's runnable threads now (the 4th field of /proc/loadavg,
/// "running/total"), or -1 when it cannot be read.
int runnableThreads() {
  char text[128] = {};
  FILE *file = std::fopen("/proc/loadavg", "r");
  if (file == nullptr)
    return -1;
  size_t n = std::fread(text, 1, sizeof(text) - 1, file);
  std::fclose(file);
  text[n] = '\0';
  double a, b, c;
  int running = 0, total = 0;
  if (std::sscanf(text, "%lf %lf %lf %d/%d", &a, &b, &c, &running, &total) != 5)
    return -1;
  return running;
}

/// This process's runnable threads now (state R in /proc/self/task/*/stat).
int ownRunnableThreads() {
  DIR *tasks = opendir("/proc/self/task");
  if (tasks == nullptr)
    return 1;
  int running = 0;
  while (dirent *entry = readdir(tasks)) {
    if (entry->d_name[0] == '.')
      continue;
    char path[300], text[512];
    std::snprintf(path, sizeof(path), "/proc/self/task/%s/stat", entry->d_name);
    FILE *file = std::fopen(path, "r");
    if (file == nullptr)
      continue; // the thread has ended
    size_t n = std::fread(text, 1, sizeof(text) - 1, file);
    std::fclose(file);
    text[n] = '\0';
    // "tid (name) S ...": the name may hold spaces and parentheses.
    const char *close = std::strrchr(text, ')');
    if (close != nullptr && close[1] == ' ' && close[2] == 'R')
      ++running;
  }
  closedir(tasks);
  return std::max(running, 1); // the thread reading is running
}

} // namespace

int usableCores() {
  cpu_set_t mask;
  int cores = 0;
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0)
    cores = CPU_COUNT(&mask);
  if (cores <= 0)
    cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  double quota = cgroupQuota();
  if (quota > 0)
    cores = std::min(cores, static_cast<int>(std::ceil(quota)));
  return std::max(cores, 1);
}

int teamFor(int current, int configured, double usable, double others) {
  double free = usable - others;
  if (std::abs(free - current) <= 0.6)
    return current;
  long nearest = std::lround(free);
  return static_cast<int>(std::clamp<long>(nearest, 1, configured));
}

double othersOf(int runnable, int own, int usable, int online) {
  double others = std::max(0, runnable - own);
  if (online > usable && online > 0)
    others *= static_cast<double>(usable) / online; // spread evenly, as far as we know
  return others;
}

CoreShare &CoreShare::get() {
  static CoreShare *share = new CoreShare();
  return *share;
}

CoreShare::CoreShare() {
  adaptive_ = environment().adaptive_threads;
  usable_ = usableCores();
  online_ = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

void CoreShare::sample(Clock::time_point now) {
  int runnable = runnableThreads();
  last_ = now;
  if (runnable < 0)
    return; // no /proc: nothing is known, nothing changes
  double others = othersOf(runnable, ownRunnableThreads(), usable_, online_);
  others_ = sampled_ ? others_ + 0.25 * (others - others_) : others;
  sampled_ = true;
  ++tally_.samples;
  tally_.others += others;
}

int CoreShare::team(int configured) {
  if (!adaptive_ || configured <= 1)
    return configured;
  std::lock_guard<std::mutex> lock(mutex_);
  Clock::time_point now = Clock::now();
  if (!sampled_ || now - last_ >= std::chrono::milliseconds(5))
    sample(now);
  int current = team_ == 0 ? configured : std::min(team_, configured);
  team_ = teamFor(current, configured, usable_, others_);
  if (team_ < configured)
    ++tally_.shrunkRuns;
  return team_;
}

CoreShare::Tally CoreShare::tally() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return tally_;
}

std::optional<std::string> CoreShare::busyNote(const Tally &before, const Tally &after) const {
  long samples = after.samples - before.samples;
  if (samples <= 0)
    return std::nullopt;
  double others = (after.others - before.others) / static_cast<double>(samples);
  if (others < 0.25)
    return std::nullopt;
  char text[160];
  std::snprintf(text, sizeof(text),
                "the machine was busy: other processes kept %.1f threads runnable on average "
                "(this process may use %d cores)",
                others, usable_);
  return std::string(text);
}

} // namespace sinter::runtime
