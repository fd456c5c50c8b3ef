//===- Spinners.h - other processes keeping the cores busy, for tests -----===//
#ifndef SINTER_TESTS_COMMON_SPINNERS_H
#define SINTER_TESTS_COMMON_SPINNERS_H

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <vector>

namespace sinter::test_support {

/// Processes that spin until killed (or for 30 s at most).
class Spinners {
public:
  explicit Spinners(int count) {
    for (int i = 0; i < count; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        volatile unsigned long spins = 0;
        while (std::chrono::steady_clock::now() < end)
          for (int k = 0; k < 100000; ++k)
            spins = spins + 1;
        _exit(0);
      }
      if (pid > 0)
        pids_.push_back(pid);
    }
  }
  ~Spinners() {
    for (pid_t pid : pids_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  size_t size() const { return pids_.size(); }

private:
  std::vector<pid_t> pids_;
};

} // namespace sinter::test_support

#endif // SINTER_TESTS_COMMON_SPINNERS_H
