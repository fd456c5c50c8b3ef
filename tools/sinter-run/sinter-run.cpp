//===- sinter-run.cpp - start a data-parallel job's workers on one node ----===//
//
// Note [The node agent]
// torchrun's flags and environment, for Sinter's workers:
//
//   sinter-run --standalone --nproc-per-node 2 ./train --epochs 1
//   sinter-run --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 --nproc-per-node 8 ./train
//
// One agent per node starts the node's workers with RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT (and
// OMP_NUM_THREADS = cores / local workers unless it is set), each worker
// killed with its agent (a parent-death signal), its output prefixed with
// its rank. The agent of node 0 hosts the rendezvous store (Note [The
// rendezvous store] in sinter/runtime/Store.h) at MASTER_PORT; every
// agent keeps a connection to it. When a worker fails (a non-zero exit or
// a signal), its agent writes the failure to the store and stops the
// node's workers (SIGTERM, then SIGKILL after 5 s); every other agent sees
// the failure within a poll (0.2 s) and stops its own. Failures are
// numbered as they reach the store: a peer's worker that fails because
// this one died reports a moment later. After a second for such late
// reports, each agent prints the failures in that order ("first:
// rank 1 (local rank 0 on node 1, pid 4242) was killed by signal 9
// (Killed); its last lines: ...", then the others) and exits 1. An agent
// that loses the store (node 0 went away) stops its workers too. With
// --max-restarts N, every agent starts every worker again instead (at most
// N times), with SINTER_RESTART (and TORCHELASTIC_RESTART_COUNT) counting
// the restarts: a worker resumes from its last checkpoint.
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"

#include "sinter/runtime/Store.h"

#include "absl/strings/str_cat.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

using namespace sinter;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Flags {
  int nnodes = 1;
  int nprocPerNode = 1;
  int nodeRank = 0;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  bool standalone = false;
  int maxRestarts = 0;
  std::string runId = "none";
  double rendezvousTimeout = 300;
  std::vector<std::string> command;
};

struct Worker {
  int localRank = 0;
  int rank = 0;
  pid_t pid = -1;
  int output = -1;
  std::string partial = {};
  std::deque<std::string> lastLines = {};
  bool exited = false;
  int status = 0;
  /// How it failed, for the report (empty: it has not failed).
  std::string failure = {};
};

constexpr size_t kLastLines = 20;
constexpr auto kGrace = 5s;
constexpr auto kPoll = 200ms;
/// How long the agent waits, after a worker's failure, for the others'
/// (Note [The first failure]).
constexpr auto kSettle = 500ms;
/// How long the agent reads what its finished workers left in their pipes.
constexpr auto kDrain = 2s;

/// Whether a worker's last lines say that it lost a peer (its failure may
/// be that peer's consequence).
bool lostAPeer(const Worker &worker) {
  for (const std::string &line : worker.lastLines)
    if (line.find("Connection reset by peer") != std::string::npos ||
        line.find("Connection closed by peer") != std::string::npos)
      return true;
  return false;
}

volatile std::sig_atomic_t stopSignal = 0;
void onStop(int signal) { stopSignal = signal; }

std::string describeExit(int status) {
  if (WIFSIGNALED(status))
    return absl::StrCat("was killed by signal ", WTERMSIG(status), " (",
                        strsignal(WTERMSIG(status)), ")");
  return absl::StrCat("exited with status ", WEXITSTATUS(status));
}

class Agent {
public:
  explicit Agent(Flags flags) : flags_(std::move(flags)) {}
  int run();

private:
  /// Starts the node's workers of restart `generation`.
  bool startWorkers(int generation);
  /// Reads what the workers wrote, prints it prefixed, and reaps those that
  /// exited; the first failure, if any.
  std::optional<std::string> watch();
  /// The failure to name once `seen` was found (Note [The first failure]).
  std::string firstFailure(const std::string &seen);
  void printLine(Worker &worker, const std::string &line);
  void stopWorkers();
  /// Failures are numbered in the order they reach the store: the first
  /// is "failure/<generation>/1".
  static std::string failureKey(int generation, int64_t number) {
    return absl::StrCat("failure/", generation, "/", number);
  }
  static std::string failureCount(int generation) { return absl::StrCat("failures/", generation); }
  /// Every failure the nodes reported for `generation`, in order, once
  /// late reports (a peer's worker that failed because this one did) had
  /// a moment to arrive.
  std::vector<std::string> reportedFailures(int generation, Clock::time_point found);

  Flags flags_;
  std::unique_ptr<runtime::StoreServer> server_;
  std::unique_ptr<runtime::StoreClient> store_;
  std::vector<Worker> workers_;
  /// The workers that failed, in the order the agent found them.
  std::vector<const Worker *> failedOrder_;
};

bool Agent::startWorkers(int generation) {
  workers_.clear();
  failedOrder_.clear();
  int world = flags_.nnodes * flags_.nprocPerNode;
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::string threads = std::to_string(std::max(1u, cores / unsigned(flags_.nprocPerNode)));
  pid_t agent = ::getpid();
  for (int local = 0; local < flags_.nprocPerNode; ++local) {
    Worker worker;
    worker.localRank = local;
    worker.rank = flags_.nodeRank * flags_.nprocPerNode + local;
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) {
      std::fprintf(stderr, "sinter-run: pipe: %s\n", std::strerror(errno));
      return false;
    }
    std::vector<std::pair<std::string, std::string>> env = {
        {"RANK", std::to_string(worker.rank)},
        {"LOCAL_RANK", std::to_string(local)},
        {"WORLD_SIZE", std::to_string(world)},
        {"LOCAL_WORLD_SIZE", std::to_string(flags_.nprocPerNode)},
        {"GROUP_RANK", std::to_string(flags_.nodeRank)},
        {"GROUP_WORLD_SIZE", std::to_string(flags_.nnodes)},
        {"ROLE_RANK", std::to_string(worker.rank)},
        {"ROLE_WORLD_SIZE", std::to_string(world)},
        {"MASTER_ADDR", flags_.masterAddr},
        {"MASTER_PORT", std::to_string(flags_.masterPort)},
        {"SINTER_STORE_HOSTED", "1"},
        {"SINTER_RUN_ID", flags_.runId},
        {"SINTER_RESTART", std::to_string(generation)},
        {"TORCHELASTIC_RESTART_COUNT", std::to_string(generation)},
        {"TORCHELASTIC_MAX_RESTARTS", std::to_string(flags_.maxRestarts)},
        {"TORCHELASTIC_RUN_ID", flags_.runId},
    };
    pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "sinter-run: fork: %s\n", std::strerror(errno));
      return false;
    }
    if (pid == 0) {
      // The worker dies with its agent, even one killed with SIGKILL.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != agent)
        ::_exit(1);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::dup2(ends[1], STDOUT_FILENO);
      ::dup2(ends[1], STDERR_FILENO);
      for (const auto &[name, value] : env)
        ::setenv(name.c_str(), value.c_str(), 1);
      ::setenv("OMP_NUM_THREADS", threads.c_str(), 0);
      std::vector<char *> argv;
      for (std::string &arg : flags_.command)
        argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      std::fprintf(stderr, "sinter-run: cannot run %s: %s\n", argv[0], std::strerror(errno));
      ::_exit(127);
    }
    ::close(ends[1]);
    worker.pid = pid;
    worker.output = ends[0];
    workers_.push_back(std::move(worker));
  }
  return true;
}

void Agent::printLine(Worker &worker, const std::string &line) {
  std::printf("[rank %d] %s\n", worker.rank, line.c_str());
  std::fflush(stdout);
  worker.lastLines.push_back(line);
  if (worker.lastLines.size() > kLastLines)
    worker.lastLines.pop_front();
}

std::optional<std::string> Agent::watch() {
  std::vector<pollfd> fds;
  for (Worker &worker : workers_)
    if (worker.output >= 0)
      fds.push_back({worker.output, POLLIN, 0});
  if (!fds.empty())
    ::poll(fds.data(), fds.size(), static_cast<int>(kPoll.count()));
  else
    std::this_thread::sleep_for(kPoll);
  for (Worker &worker : workers_) {
    if (worker.output < 0)
      continue;
    pollfd one{worker.output, POLLIN, 0};
    while (::poll(&one, 1, 0) > 0) {
      char buffer[4096];
      ssize_t got = ::read(worker.output, buffer, sizeof buffer);
      if (got <= 0) {
        if (!worker.partial.empty())
          printLine(worker, worker.partial);
        worker.partial.clear();
        ::close(worker.output);
        worker.output = -1;
        break;
      }
      worker.partial.append(buffer, static_cast<size_t>(got));
      for (size_t end; (end = worker.partial.find('\n')) != std::string::npos;) {
        printLine(worker, worker.partial.substr(0, end));
        worker.partial.erase(0, end + 1);
      }
    }
  }
  std::optional<std::string> failure;
  for (Worker &worker : workers_) {
    if (worker.exited)
      continue;
    int status = 0;
    if (::waitpid(worker.pid, &status, WNOHANG) != worker.pid)
      continue;
    worker.exited = true;
    worker.status = status;
    bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (!failed)
      continue;
    std::string lines;
    for (const std::string &line : worker.lastLines)
      lines += absl::StrCat("\n    ", line);
    worker.failure =
        absl::StrCat("rank ", worker.rank, " (local rank ", worker.localRank, " on node ",
                     flags_.nodeRank, ", pid ", worker.pid, ") ", describeExit(status),
                     worker.lastLines.empty() ? ", printing nothing" : "; its last lines:" + lines);
    failedOrder_.push_back(&worker);
    if (!failure)
      failure = worker.failure;
  }
  return failure;
}

/// Note [The first failure]
/// A worker that exits closes its connections as it goes, and a peer that
/// notices may exit before the agent reaps the first (a program returning
/// from main runs its destructors, closing sockets, before it is gone).
/// So after the first failure the agent waits a moment (kSettle) for the
/// node's other workers, and names the first that failed without having
/// lost a peer: the cause, not its consequences. Failures on other nodes
/// are ordered by the store (reportedFailures).
std::string Agent::firstFailure(const std::string &seen) {
  auto settle = Clock::now() + kSettle;
  while (Clock::now() < settle) {
    bool running = false;
    for (const Worker &worker : workers_)
      running = running || !worker.exited;
    if (!running)
      break;
    (void)watch();
  }
  for (const Worker *worker : failedOrder_)
    if (!lostAPeer(*worker))
      return worker->failure;
  return seen;
}

void Agent::stopWorkers() {
  for (Worker &worker : workers_)
    if (!worker.exited)
      ::kill(worker.pid, SIGTERM);
  auto deadline = Clock::now() + kGrace;
  bool killed = false;
  while (true) {
    (void)watch();
    bool running = false;
    for (Worker &worker : workers_)
      running = running || !worker.exited;
    if (!running)
      break;
    if (!killed && Clock::now() > deadline) {
      for (Worker &worker : workers_)
        if (!worker.exited)
          ::kill(worker.pid, SIGKILL);
      killed = true;
    }
  }
  for (Worker &worker : workers_)
    if (worker.output >= 0)
      ::close(worker.output);
}

std::vector<std::string> Agent::reportedFailures(int generation, Clock::time_point found) {
  std::this_thread::sleep_until(found + 1s);
  std::vector<std::string> failures;
  auto count = store_->add(failureCount(generation), 0);
  for (int64_t number = 1; count.ok() && number <= *count; ++number)
    if (auto message = store_->get(failureKey(generation, number), 5s); message.ok())
      failures.push_back(*message);
  return failures;
}

int Agent::run() {
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGINT, onStop);
  std::signal(SIGTERM, onStop);
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(flags_.rendezvousTimeout * 1000));
  if (flags_.nodeRank == 0) {
    auto server = runtime::StoreServer::start("0.0.0.0", flags_.masterPort);
    if (!server.ok()) {
      std::fprintf(stderr, "sinter-run: the rendezvous store: %s\n",
                   std::string(server.status().message()).c_str());
      return 1;
    }
    server_ = std::move(*server);
    flags_.masterPort = server_->port();
  }
  auto store = runtime::StoreClient::connect(flags_.masterAddr, flags_.masterPort,
                                             {.prefix = absl::StrCat(flags_.runId, "/agent/"),
                                              .name = absl::StrCat("node ", flags_.nodeRank),
                                              .timeout = timeout});
  if (!store.ok()) {
    std::fprintf(stderr, "sinter-run: node %d: %s\n", flags_.nodeRank,
                 std::string(store.status().message()).c_str());
    return 1;
  }
  store_ = std::move(*store);
  int world = flags_.nnodes * flags_.nprocPerNode;
  std::printf("sinter-run: node %d of %d, ranks %d to %d of %d, store at %s:%d\n", flags_.nodeRank,
              flags_.nnodes, flags_.nodeRank * flags_.nprocPerNode,
              (flags_.nodeRank + 1) * flags_.nprocPerNode - 1, world, flags_.masterAddr.c_str(),
              flags_.masterPort);
  std::fflush(stdout);

  for (int generation = 0;; ++generation) {
    if (!startWorkers(generation)) {
      stopWorkers();
      return 1;
    }
    std::string failure;
    bool ours = false;
    auto nextCheck = Clock::now();
    while (true) {
      if (std::optional<std::string> failed = watch()) {
        failure = firstFailure(*failed);
        ours = true;
        break;
      }
      if (stopSignal != 0) {
        std::fprintf(stderr, "sinter-run: node %d: stopping the workers (%s)\n", flags_.nodeRank,
                     strsignal(stopSignal));
        stopWorkers();
        return 128 + stopSignal;
      }
      bool allDone = true;
      for (const Worker &worker : workers_)
        allDone = allDone && worker.exited;
      if (allDone) {
        // A worker's last lines may still be in its pipe when it is reaped:
        // read them to the end (a bounded wait: a process the worker left
        // behind may hold the pipe open).
        auto until = Clock::now() + kDrain;
        while (Clock::now() < until &&
               std::any_of(workers_.begin(), workers_.end(),
                           [](const Worker &worker) { return worker.output >= 0; }))
          (void)watch();
        break;
      }
      if (Clock::now() >= nextCheck) {
        nextCheck = Clock::now() + kPoll;
        auto failed = store_->check({failureKey(generation, 1)});
        if (!failed.ok()) {
          failure =
              absl::StrCat("node ", flags_.nodeRank,
                           " lost the rendezvous store: ", std::string(failed.status().message()));
          break;
        }
        if (*failed) {
          failure = "another node's worker failed";
          break;
        }
      }
    }
    if (failure.empty()) {
      // Every worker of this node finished; node 0 keeps the store up until
      // every node says so.
      (void)store_->set(absl::StrCat("done/", generation, "/", flags_.nodeRank), "1");
      if (flags_.nodeRank == 0) {
        std::vector<std::string> nodes;
        for (int node = 0; node < flags_.nnodes; ++node)
          nodes.push_back(absl::StrCat("done/", generation, "/", node));
        Status all = store_->wait(nodes, timeout);
        if (!all.ok())
          std::fprintf(stderr, "sinter-run: node 0: %s\n", std::string(all.message()).c_str());
      }
      std::printf("sinter-run: node %d: all %d workers finished\n", flags_.nodeRank,
                  flags_.nprocPerNode);
      return 0;
    }
    auto found = Clock::now();
    if (ours) {
      if (auto number = store_->add(failureCount(generation), 1); number.ok())
        (void)store_->set(failureKey(generation, *number), failure);
    }
    stopWorkers();
    std::vector<std::string> failures = reportedFailures(generation, found);
    if (failures.empty())
      failures.push_back(failure); // the store is gone: what this node saw
    std::fprintf(stderr, "sinter-run: node %d: first: %s\n", flags_.nodeRank, failures[0].c_str());
    for (size_t i = 1; i < failures.size(); ++i)
      std::fprintf(stderr, "sinter-run: node %d: then: %s\n", flags_.nodeRank, failures[i].c_str());
    if (generation >= flags_.maxRestarts) {
      if (flags_.maxRestarts > 0)
        std::fprintf(stderr, "sinter-run: node %d: no restarts left (--max-restarts %d)\n",
                     flags_.nodeRank, flags_.maxRestarts);
      return 1;
    }
    std::fprintf(stderr, "sinter-run: node %d: restarting every worker (restart %d of %d)\n",
                 flags_.nodeRank, generation + 1, flags_.maxRestarts);
  }
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Starts the workers of a data-parallel job on this node (torchrun's flags)",
               "sinter-run"};
  Flags flags;
  app.add_option("--nnodes", flags.nnodes, "Nodes (machines) in the job")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--nproc-per-node,--nproc_per_node", flags.nprocPerNode,
                 "Workers on this node (one per GPU, or per CPU process)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--node-rank,--node_rank", flags.nodeRank, "This node's index, from 0")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--master-addr,--master_addr", flags.masterAddr,
                 "Address of node 0, which hosts the rendezvous store");
  app.add_option("--master-port,--master_port", flags.masterPort,
                 "Port of the rendezvous store on node 0")
      ->check(CLI::Range(1, 65535));
  app.add_flag("--standalone", flags.standalone,
               "One node, the store on this machine at a free port");
  app.add_option("--max-restarts,--max_restarts", flags.maxRestarts,
                 "Restart every worker up to this many times after a failure")
      ->check(CLI::Range(0, 1000));
  app.add_option("--rdzv-id,--rdzv_id,--run-id", flags.runId,
                 "The job's id (keys in the store are prefixed by it)");
  app.add_option("--rdzv-timeout", flags.rendezvousTimeout,
                 "Seconds to wait for the store and the other nodes")
      ->check(CLI::PositiveNumber);
  // The worker program and its arguments: everything from the first
  // argument that is not sinter-run's.
  app.prefix_command();
  app.footer("Usage: sinter-run [OPTIONS] PROGRAM [ARGS...]");
  if (std::optional<int> status = sinter::tools::parseCommandLine(app, argc, argv))
    return *status;
  flags.command = app.remaining();
  if (flags.command.empty()) {
    std::fprintf(stderr,
                 "sinter-run: no program to run (sinter-run [OPTIONS] PROGRAM [ARGS...])\n");
    return 2;
  }
  if (flags.standalone) {
    if (flags.nnodes != 1 || flags.nodeRank != 0) {
      std::fprintf(stderr, "sinter-run: --standalone is one node: drop --nnodes/--node-rank\n");
      return 2;
    }
    flags.masterAddr = "127.0.0.1";
    flags.masterPort = 0;
    std::random_device random;
    flags.runId = absl::StrCat("standalone-", random());
  }
  if (flags.nodeRank >= flags.nnodes) {
    std::fprintf(stderr, "sinter-run: --node-rank %d is not below --nnodes %d\n", flags.nodeRank,
                 flags.nnodes);
    return 2;
  }
  return Agent(std::move(flags)).run();
}
