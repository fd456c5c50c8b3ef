//===- CollectivesTest.cpp - Gloo collectives between real processes -----===//
//
// Each test forks its ranks (ctest runs each test in a process of its own,
// with no other thread yet); a rank joins the world as a launched process
// would (startProcessGroup: rank 0 hosts the store), runs collectives over
// TCP on loopback and sends its results back through a pipe. Every rank is
// killed at a deadline, so nothing here can hang.
//
//===----------------------------------------------------------------------===//
#include "CollectiveOrder.h"
#include "sinter/runtime/Communicator.h"
#include "sinter/runtime/ProcessGroup.h"
#include "sinter/runtime/Program.h"
#include "sinter/runtime/c_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <utility>

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace sinter::runtime;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

namespace {

int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

struct RankResult {
  int exitCode = -1;
  std::string output;
};

using RankBody = std::function<std::string(ProcessGroup &, int rank)>;

/// Runs `body` on `size` forked ranks joined through the store; a rank
/// whose body throws or whose group fails writes "ERROR: ..." and exits 1.
/// `joins` says which ranks start at all.
std::vector<RankResult> runRanks(int size, Communicator::Options options, const RankBody &body,
                                 std::function<bool(int)> joins = {},
                                 std::chrono::seconds deadline = 60s) {
  int port = freePort();
  std::vector<pid_t> pids(size, -1);
  std::vector<int> pipes(size, -1);
  for (int rank = 0; rank < size; ++rank) {
    if (joins && !joins(rank))
      continue;
    int ends[2];
    EXPECT_EQ(::pipe(ends), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ends[0]);
      World world{.rank = rank,
                  .size = size,
                  .localRank = rank,
                  .localSize = size,
                  .masterAddress = "127.0.0.1",
                  .storePort = port,
                  .launcher = "test",
                  .runId = "collectives",
                  .hostsStore = rank == 0};
      std::string output;
      int code = 0;
      auto group = startProcessGroup(world, {.collectives = options});
      if (!group.ok()) {
        output = "ERROR: " + std::string(group.status().message());
        code = 1;
      } else {
        try {
          output = body(**group, rank);
        } catch (const std::exception &error) {
          output = std::string("ERROR: ") + error.what();
          code = 1;
        }
      }
      size_t sent = 0;
      while (sent < output.size()) {
        ssize_t wrote = ::write(ends[1], output.data() + sent, output.size() - sent);
        if (wrote <= 0)
          break;
        sent += static_cast<size_t>(wrote);
      }
      ::close(ends[1]);
      // No destructors: the group's threads and sockets go with the process.
      ::_exit(code);
    }
    ::close(ends[1]);
    pids[rank] = pid;
    pipes[rank] = ends[0];
  }
  std::vector<RankResult> results(size);
  auto end = Clock::now() + deadline;
  for (int rank = 0; rank < size; ++rank) {
    if (pids[rank] < 0)
      continue;
    char buffer[65536];
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
      pollfd one{pipes[rank], POLLIN, 0};
      if (left.count() <= 0 || ::poll(&one, 1, static_cast<int>(left.count())) <= 0)
        break;
      ssize_t got = ::read(pipes[rank], buffer, sizeof buffer);
      if (got <= 0)
        break;
      results[rank].output.append(buffer, static_cast<size_t>(got));
    }
    ::close(pipes[rank]);
  }
  for (int rank = 0; rank < size; ++rank) {
    if (pids[rank] < 0)
      continue;
    int status = 0;
    while (::waitpid(pids[rank], &status, WNOHANG) == 0) {
      if (Clock::now() > end) {
        ::kill(pids[rank], SIGKILL);
        ADD_FAILURE() << "rank " << rank << " was still running at the deadline";
      }
      std::this_thread::sleep_for(10ms);
    }
    results[rank].exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return results;
}

template <typename T> std::string bytesOf(const std::vector<T> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T));
}

void check(Communicator &communicator, Communicator::Ticket ticket) {
  sinter::Status status = communicator.wait(ticket);
  if (!status.ok())
    throw std::runtime_error(std::string(status.message()));
}

/// Rank r's values: different on every rank, with fractions that make the
/// order of addition matter.
std::vector<float> valuesOf(int rank, int64_t count) {
  std::mt19937 random(1234 + rank);
  std::uniform_real_distribution<float> value(-1000.0f, 1000.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float &one : values)
    one = value(random) * (rank % 2 == 0 ? 1.0f : 1e-3f);
  return values;
}

std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// More than one of Gloo's 1 MiB ring segments per rank.
constexpr int64_t kCount = 700'000;

} // namespace

TEST(Collectives, TheWorldOfOneLeavesValuesAsTheyAre) {
  auto local = localCommunicator();
  std::vector<float> values = {1, 2, 3};
  EXPECT_TRUE(
      local
          ->wait(local->allReduce(values.data(), 3, ElementType::F32, ReduceOp::Mean, "all_reduce"))
          .ok());
  EXPECT_EQ(values, (std::vector<float>{1, 2, 3}));
  std::vector<float> gathered(3);
  EXPECT_TRUE(local->wait(local->allGather(values.data(), gathered.data(), 12, "g")).ok());
  EXPECT_EQ(gathered, values);
}

TEST(Collectives, AllReduceIsBitwiseEqualOnEveryRankOfTwoAndThree) {
  for (int size : {2, 3}) {
    auto results = runRanks(size, {.timeout = 30s}, [](ProcessGroup &group, int rank) {
      Communicator &comm = *group.communicator;
      std::string out;
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
        std::vector<float> values = valuesOf(rank, kCount);
        check(comm, comm.allReduce(values.data(), kCount, ElementType::F32, op,
                                   std::string(reduceOpName(op))));
        out += bytesOf(values);
      }
      std::vector<int64_t> counts = {rank + 1, int64_t(1) << 40, -rank};
      check(comm, comm.allReduce(counts.data(), 3, ElementType::I64, ReduceOp::Sum, "i64"));
      out += bytesOf(counts);
      // bf16 2.0 and 0.5 from each rank.
      std::vector<uint16_t> halves = {0x4000, 0x3f00};
      check(comm, comm.allReduce(halves.data(), 2, ElementType::BF16, ReduceOp::Sum, "bf16"));
      out += bytesOf(halves);
      return out;
    });
    std::vector<std::vector<float>> inputs;
    for (int rank = 0; rank < size; ++rank) {
      ASSERT_EQ(results[rank].exitCode, 0) << "rank " << rank << ": " << results[rank].output;
      EXPECT_EQ(results[rank].output, results[0].output) << "rank " << rank << " of " << size;
      inputs.push_back(valuesOf(rank, kCount));
    }
    const std::string &out = results[0].output;
    ASSERT_EQ(out.size(), 4 * kCount * 4 + 24 + 4);
    auto at = [&](int which, int64_t i) {
      float value;
      std::memcpy(&value, out.data() + (which * kCount + i) * 4, 4);
      return value;
    };
    for (int64_t i = 0; i < kCount; i += 997) {
      float sum = 0, max = inputs[0][i], min = inputs[0][i];
      double exact = 0;
      for (int rank = 0; rank < size; ++rank) {
        sum += inputs[rank][i];
        exact += inputs[rank][i];
        max = std::max(max, inputs[rank][i]);
        min = std::min(min, inputs[rank][i]);
      }
      EXPECT_NEAR(at(0, i), exact, 1e-4 * std::abs(exact) + 1e-4) << i;
      EXPECT_NEAR(at(1, i), exact / size, 1e-4 * std::abs(exact / size) + 1e-4) << i;
      EXPECT_EQ(at(2, i), max) << i;
      EXPECT_EQ(at(3, i), min) << i;
    }
    int64_t counts[3];
    std::memcpy(counts, out.data() + 4 * kCount * 4, 24);
    EXPECT_EQ(counts[0], size * (size + 1) / 2);
    EXPECT_EQ(counts[1], (int64_t(1) << 40) * size);
    EXPECT_EQ(counts[2], -size * (size - 1) / 2);
    uint16_t halves[2];
    std::memcpy(halves, out.data() + 4 * kCount * 4 + 24, 4);
    EXPECT_EQ(std::bit_cast<float>(uint32_t(halves[0]) << 16), 2.0f * size);
    EXPECT_EQ(std::bit_cast<float>(uint32_t(halves[1]) << 16), 0.5f * size);
  }
}

TEST(Collectives, TheDeterministicModeAddsInRankOrder) {
  const int size = 3;
  auto results =
      runRanks(size, {.timeout = 30s, .deterministic = true}, [](ProcessGroup &group, int rank) {
        Communicator &comm = *group.communicator;
        std::vector<float> values = valuesOf(rank, kCount);
        check(comm, comm.allReduce(values.data(), kCount, ElementType::F32, ReduceOp::Sum, "sum"));
        return bytesOf(values);
      });
  std::vector<float> expected = valuesOf(0, kCount);
  for (int rank = 1; rank < size; ++rank) {
    std::vector<float> more = valuesOf(rank, kCount);
    for (int64_t i = 0; i < kCount; ++i)
      expected[i] += more[i];
  }
  for (int rank = 0; rank < size; ++rank) {
    ASSERT_EQ(results[rank].exitCode, 0) << results[rank].output;
    EXPECT_TRUE(results[rank].output == bytesOf(expected)) << "rank " << rank;
  }
  // The check can fail: another order gives other bits here.
  std::vector<float> reversed = valuesOf(2, kCount);
  for (int rank = 1; rank >= 0; --rank) {
    std::vector<float> more = valuesOf(rank, kCount);
    for (int64_t i = 0; i < kCount; ++i)
      reversed[i] += more[i];
  }
  EXPECT_NE(bytesOf(reversed), bytesOf(expected));
}

TEST(Collectives, BroadcastGatherScatterAndBarrier) {
  const int size = 3;
  auto results = runRanks(size, {.timeout = 30s}, [](ProcessGroup &group, int rank) {
    Communicator &comm = *group.communicator;
    std::vector<int32_t> broadcast = {rank * 10, rank * 10 + 1};
    check(comm, comm.broadcast(broadcast.data(), 8, 2, "broadcast"));
    std::vector<int32_t> mine = {rank, -rank};
    std::vector<int32_t> gathered(6);
    check(comm, comm.allGather(mine.data(), gathered.data(), 8, "all_gather"));
    std::vector<float> whole = {1.0f * rank, 2.0f * rank, 3.0f * rank,
                                4.0f * rank, 5.0f * rank, 6.0f * rank};
    std::vector<float> slice(2);
    check(comm, comm.reduceScatter(whole.data(), slice.data(), 2, ElementType::F32, ReduceOp::Sum,
                                   "reduce_scatter"));
    check(comm, comm.barrier("barrier"));
    return bytesOf(broadcast) + bytesOf(gathered) + bytesOf(slice);
  });
  for (int rank = 0; rank < size; ++rank) {
    ASSERT_EQ(results[rank].exitCode, 0) << results[rank].output;
    std::string expected =
        bytesOf(std::vector<int32_t>{20, 21}) + bytesOf(std::vector<int32_t>{0, 0, 1, -1, 2, -2}) +
        bytesOf(std::vector<float>{3.0f * (2 * rank + 1), 3.0f * (2 * rank + 2)});
    EXPECT_TRUE(results[rank].output == expected) << "rank " << rank;
  }
}

TEST(Collectives, AMeanOfIntegersIsRefusedOnEveryRank) {
  auto results = runRanks(2, {.timeout = 10s}, [](ProcessGroup &group, int) {
    Communicator &comm = *group.communicator;
    // Every rank has joined before one leaves (the refusal needs no peer).
    check(comm, comm.barrier("joined"));
    std::vector<int32_t> values = {1};
    sinter::Status status =
        comm.wait(comm.allReduce(values.data(), 1, ElementType::I32, ReduceOp::Mean, "mean"));
    return std::string(status.message());
  });
  for (const RankResult &result : results)
    EXPECT_THAT(result.output,
                HasSubstr("mean: a mean over ranks needs floating elements, not i32"));
}

TEST(Collectives, APeerThatDiesFailsTheCollectiveNamingItAndPoisonsTheRest) {
  auto results = runRanks(2, {.timeout = 20s}, [](ProcessGroup &group, int rank) -> std::string {
    Communicator &comm = *group.communicator;
    // Every rank has joined once the barrier is through.
    check(comm, comm.barrier("joined"));
    if (rank == 1)
      ::_exit(3); // dies before the step's collective
    std::vector<float> values(1000, 1.0f);
    auto start = Clock::now();
    sinter::Status first =
        comm.wait(comm.allReduce(values.data(), 1000, ElementType::F32, ReduceOp::Sum,
                                 "all_reduce of bucket 3 (3.9 KiB) at step 57"));
    double took = std::chrono::duration<double>(Clock::now() - start).count();
    sinter::Status second = comm.wait(comm.barrier("barrier"));
    return std::string(first.message()) + "\n" + std::string(second.message()) + "\n" +
           std::to_string(took) + "\n" + (comm.health().ok() ? "healthy" : "poisoned");
  });
  EXPECT_EQ(results[1].exitCode, 3);
  ASSERT_EQ(results[0].exitCode, 0) << results[0].output;
  std::vector<std::string> lines = splitLines(results[0].output);
  ASSERT_EQ(lines.size(), 4u) << results[0].output;
  EXPECT_THAT(lines[0], HasSubstr("all_reduce of bucket 3 (3.9 KiB) at step 57: "));
  EXPECT_THAT(lines[0], ::testing::MatchesRegex(".*: rank 1 \\(\\[127.0.0.1\\]\\)"));
  EXPECT_EQ(lines[1], lines[0]) << "later collectives fail with the first failure";
  EXPECT_LT(std::stod(lines[2]), 10.0)
      << "a closed connection is found at once, not at the timeout";
  EXPECT_EQ(lines[3], "poisoned");
}

TEST(Collectives, AStoppedPeerIsFoundAtTheTimeout) {
  auto results = runRanks(2, {.timeout = 2s}, [](ProcessGroup &group, int rank) -> std::string {
    Communicator &comm = *group.communicator;
    if (rank == 1) {
      // Joined, then does not take part (as a stopped process would), and
      // goes away long after rank 0 has given up.
      std::this_thread::sleep_for(8s);
      ::_exit(0);
    }
    std::vector<float> values(10, 1.0f);
    auto start = Clock::now();
    sinter::Status status =
        comm.wait(comm.allReduce(values.data(), 10, ElementType::F32, ReduceOp::Sum, "stuck"));
    double took = std::chrono::duration<double>(Clock::now() - start).count();
    return std::string(status.message()) + "\n" + std::to_string(took);
  });
  ASSERT_EQ(results[0].exitCode, 0) << results[0].output;
  std::vector<std::string> lines = splitLines(results[0].output);
  ASSERT_EQ(lines.size(), 2u) << results[0].output;
  EXPECT_THAT(lines[0], HasSubstr("stuck: "));
  EXPECT_THAT(lines[0], HasSubstr("imed out"));
  EXPECT_GE(std::stod(lines[1]), 1.5);
  EXPECT_LT(std::stod(lines[1]), 6.0);
}

TEST(Collectives, ARankThatNeverArrivesFailsTheJoinAtTheTimeout) {
  auto start = Clock::now();
  auto results = runRanks(
      2, {.timeout = 1s}, [](ProcessGroup &, int) { return std::string("joined"); },
      [](int rank) { return rank == 0; });
  EXPECT_EQ(results[0].exitCode, 1);
  EXPECT_THAT(results[0].output, HasSubstr("rank 0 of 2 could not connect to its peers"));
  EXPECT_THAT(results[0].output, HasSubstr("gloo/1"));
  EXPECT_LT(Clock::now() - start, 15s);
}

TEST(Collectives, AbortEndsACollectiveThatWaits) {
  auto results = runRanks(2, {.timeout = 60s}, [](ProcessGroup &group, int rank) -> std::string {
    Communicator &comm = *group.communicator;
    if (rank == 1) {
      std::this_thread::sleep_for(6s);
      ::_exit(0);
    }
    std::vector<float> values(10, 1.0f);
    auto ticket = comm.allReduce(values.data(), 10, ElementType::F32, ReduceOp::Sum, "waiting");
    std::thread aborter([&] {
      std::this_thread::sleep_for(300ms);
      comm.abort("the job is stopping");
    });
    auto start = Clock::now();
    sinter::Status status = comm.wait(ticket);
    double took = std::chrono::duration<double>(Clock::now() - start).count();
    aborter.join();
    return std::string(status.message()) + "\n" + std::to_string(took);
  });
  ASSERT_EQ(results[0].exitCode, 0) << results[0].output;
  std::vector<std::string> lines = splitLines(results[0].output);
  ASSERT_EQ(lines.size(), 2u) << results[0].output;
  EXPECT_THAT(lines[0], HasSubstr("the job is stopping"));
  EXPECT_LT(std::stod(lines[1]), 5.0);
}

namespace {

/// A program that starts an all-reduce of `first` floats, then one of
/// `second` (buckets only: compareCollectiveOrder reads its steps, and
/// nothing runs it).
Program twoAllReduces(int64_t first, int64_t second) {
  Program program;
  using Kind = Program::Step::Kind;
  for (int64_t count : {first, second}) {
    Program::Buffer bucket;
    bucket.bytes = 4 * count;
    program.buffers.push_back(bucket);
  }
  for (auto [kind, bucket] : {std::pair{Kind::AllReduce, 0},
                              {Kind::AllReduce, 1},
                              {Kind::AllReduceDone, 1},
                              {Kind::AllReduceDone, 0}}) {
    Program::Step step;
    step.kind = kind;
    step.inputs = {bucket};
    step.outputs = {bucket};
    program.steps.push_back(step);
  }
  return program;
}

} // namespace

// Note [The collectives as run]: ranks whose steps start the same
// collectives in different orders fail, every one with the same message,
// before any buffer is exchanged; the same order passes, and an executable
// is compared once.
TEST(Collectives, RanksThatStartTheirCollectivesInDifferentOrdersFailNamingTheFirst) {
  auto results = runRanks(2, {.timeout = 20s}, [](ProcessGroup &group, int rank) {
    Communicator &comm = *group.communicator;
    std::string out;
    sinter::Status same = compareCollectiveOrder(twoAllReduces(256, 1024), comm);
    out += same.ok() ? "same: ok\n" : "same: " + std::string(same.message()) + "\n";
    // Rank 1 starts the larger bucket first.
    Program swapped = rank == 0 ? twoAllReduces(256, 1024) : twoAllReduces(1024, 256);
    sinter::Status differs = compareCollectiveOrder(swapped, comm);
    out += "swapped: " + std::string(differs.message()) + "\n";
    // Buckets of equal size but other reductions differ too.
    Program mean = twoAllReduces(256, 256);
    if (rank == 1)
      mean.steps[1].reduce = ReduceOp::Mean;
    out += "mean: " + std::string(compareCollectiveOrder(mean, comm).message()) + "\n";
    // One rank starts a collective more.
    Program more = twoAllReduces(256, 1024);
    if (rank == 0)
      more.steps.erase(more.steps.begin() + 1, more.steps.begin() + 3);
    out += "more: " + std::string(compareCollectiveOrder(more, comm).message()) + "\n";
    // Once per executable: a second call communicates nothing (rank 1 alone
    // makes it, and is not left waiting for rank 0).
    auto key = reinterpret_cast<const Executable *>(&out);
    Program program = twoAllReduces(256, 1024);
    sinter::Status first = checkCollectiveOrderOnce(key, program, &comm);
    sinter::Status again =
        rank == 1 ? checkCollectiveOrderOnce(key, program, &comm) : sinter::Status();
    out += "once: " + std::string(first.ok() && again.ok() ? "ok" : "failed") + "\n";
    forgetCollectiveOrder(key);
    check(comm, comm.barrier("done"));
    return out;
  });
  ASSERT_EQ(results.size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const std::string &out = results[rank].output;
    EXPECT_EQ(results[rank].exitCode, 0) << out;
    EXPECT_THAT(out, HasSubstr("same: ok\n"));
    EXPECT_THAT(out, HasSubstr("swapped: the ranks' compiled steps start their collectives in "
                               "different orders, so they would exchange mismatched buffers: "
                               "collective #0 differs (rank 0: all_reduce (sum) of 1.0 KiB of "
                               "f32; rank 1: all_reduce (sum) of 4.0 KiB of f32)"));
    EXPECT_THAT(out, HasSubstr("(a value or a slice that depends on the rank)"));
    EXPECT_THAT(out, HasSubstr("mean: the ranks' compiled steps"));
    EXPECT_THAT(out, HasSubstr("collective #1 differs (rank 0: all_reduce (sum) of 1.0 KiB of "
                               "f32; rank 1: all_reduce (mean) of 1.0 KiB of f32)"));
    EXPECT_THAT(out, HasSubstr("more: the ranks' compiled steps"));
    EXPECT_THAT(out, HasSubstr("collective #1 differs (rank 0: none (it starts 1); rank 1: "
                               "all_reduce (sum) of 4.0 KiB of f32)"));
    EXPECT_THAT(out, HasSubstr("once: ok\n"));
  }
}

// The C API's process group (sinter/runtime/c_api.h), in a world of one (no
// launcher in the environment); launcher.aot_ranks runs it on two ranks.
TEST(CApiProcessGroup, AWorldOfOneReducesInPlaceAndBadArgumentsAreNamed) {
  for (const char *name :
       {"RANK", "WORLD_SIZE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"})
    ::unsetenv(name);
  sinter_process_group *group = nullptr;
  ASSERT_EQ(sinter_process_group_init(&group), SINTER_OK) << sinter_last_error();
  EXPECT_EQ(sinter_process_group_rank(group), 0);
  EXPECT_EQ(sinter_process_group_size(group), 1);
  EXPECT_EQ(sinter_process_group_local_rank(group), 0);
  float loss[2] = {2.5f, -1.25f};
  ASSERT_EQ(sinter_process_group_all_reduce(group, loss, 2, "f32", "mean"), SINTER_OK)
      << sinter_last_error();
  EXPECT_EQ(loss[0], 2.5f);
  EXPECT_EQ(loss[1], -1.25f);
  EXPECT_EQ(sinter_process_group_barrier(group), SINTER_OK) << sinter_last_error();

  auto refused = [&](int code, const char *needle) {
    EXPECT_EQ(code, SINTER_ERROR_INVALID_ARGUMENT) << sinter_last_error();
    EXPECT_THAT(sinter_last_error(), HasSubstr(needle));
  };
  refused(sinter_process_group_all_reduce(group, loss, 2, "f8", "sum"),
          "sinter_process_group_all_reduce: collectives do not take elements of type 'f8'");
  refused(sinter_process_group_all_reduce(group, loss, 2, "f32", "avg"),
          "sinter_process_group_all_reduce: unknown reduction 'avg': expected sum, mean, max or "
          "min");
  int64_t counts[1] = {3};
  refused(sinter_process_group_all_reduce(group, counts, 1, "i64", "mean"),
          "sinter_process_group_all_reduce: a mean over ranks needs floating elements, not i64");
  // A refused call leaves the group as it was.
  ASSERT_EQ(sinter_process_group_all_reduce(group, counts, 1, "i64", "sum"), SINTER_OK)
      << sinter_last_error();
  EXPECT_EQ(counts[0], 3);
  refused(sinter_process_group_all_reduce(group, loss, -1, "f32", "sum"), "a count of -1");
  refused(sinter_process_group_all_reduce(group, nullptr, 2, "f32", "sum"), "the data is NULL");
  refused(sinter_process_group_all_reduce(nullptr, loss, 2, "f32", "sum"),
          "the process group is NULL");
  EXPECT_EQ(sinter_process_group_rank(nullptr), -1);
  EXPECT_EQ(sinter_session_set_process_group(nullptr, group), SINTER_ERROR_INVALID_ARGUMENT);
  sinter_process_group_destroy(group);

  // A launcher's variable that is wrong is named.
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "two", 1);
  sinter_process_group *wrong = nullptr;
  EXPECT_NE(sinter_process_group_init(&wrong), SINTER_OK);
  EXPECT_THAT(sinter_last_error(), HasSubstr("sinter_process_group_init: "));
  EXPECT_THAT(sinter_last_error(), HasSubstr("WORLD_SIZE"));
  EXPECT_EQ(wrong, nullptr);
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
}
