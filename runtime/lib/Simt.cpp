//===- Simt.cpp - the CUDA simulator's scheduler and memory ---------------===//
//
// See Note [The CUDA simulator] in Simt.h.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Simt.h"

#include "Poison.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#include <boost/context/fiber.hpp>
#include <boost/context/preallocated.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace sinter::simt {
namespace {

namespace ctx = boost::context;

constexpr int kWarp = 32;

enum class State { Running, AtBarrier, AtWarp, Done };

struct Thread {
  ThreadContext context;
  int linear = 0; // the thread's index in its block
  State state = State::Running;
  ctx::fiber self;      // the fiber, while it is suspended
  ctx::fiber scheduler; // the scheduler, while the fiber runs
  // The warp operation it waits in.
  WarpOp op = WarpOp::Shuffle;
  unsigned mask = 0;
  uint64_t value = 0;
  int fromLane = 0;
  uint64_t result = 0;
  std::string error; // what the thread threw, if it did
  /// The block gave up (an error elsewhere): the fiber unwinds and ends
  /// when it is next resumed (or ends at once, if it never ran).
  bool abandon = false;
  // The stacks of the fiber and of the scheduler, for AddressSanitizer.
  const void *stackBottom = nullptr, *schedulerBottom = nullptr;
  std::size_t stackSize = 0, schedulerSize = 0;
};

/// What suspend() throws into an abandoned fiber.
struct Abandoned {};

// Stack switches said to AddressSanitizer (Note [The CUDA simulator]): it
// then knows which stack each fiber runs on, and reports nothing false when
// one unwinds.
#if defined(__SANITIZE_ADDRESS__)
#define SINTER_SIMT_ASAN 1
#else
#define SINTER_SIMT_ASAN 0
#endif

void startSwitch(void **fake, const void *bottom, std::size_t size) {
#if SINTER_SIMT_ASAN
  __sanitizer_start_switch_fiber(fake, bottom, size);
#else
  (void)fake, (void)bottom, (void)size;
#endif
}

void finishSwitch(void *fake, const void **bottom, std::size_t *size) {
#if SINTER_SIMT_ASAN
  __sanitizer_finish_switch_fiber(fake, bottom, size);
#else
  (void)fake, (void)bottom, (void)size;
#endif
}

/// A worker's fiber stacks (each with a guard page below it), kept from
/// block to block: a block of 1024 threads maps its stacks once per worker,
/// not once per block.
class StackPool {
public:
  explicit StackPool(std::size_t bytes) : allocator_(bytes) {}
  StackPool(const StackPool &) = delete;
  StackPool &operator=(const StackPool &) = delete;
  ~StackPool() {
    // The frames that ran on a stack leave their redzones poisoned, and
    // AddressSanitizer (GCC 12's) does not clear the shadow of unmapped
    // memory: whatever is mapped there next (its own symbolizer's buffers,
    // at the leak check) would be reported as a stack overflow.
    for (ctx::stack_context &stack : stacks_) {
      runtime::unpoison(static_cast<const char *>(stack.sp) - stack.size,
                        static_cast<int64_t>(stack.size));
      allocator_.deallocate(stack);
    }
  }
  ctx::stack_context at(std::size_t i) {
    while (stacks_.size() <= i)
      stacks_.push_back(allocator_.allocate());
    return stacks_[i];
  }

private:
  ctx::protected_fixedsize_stack allocator_;
  std::vector<ctx::stack_context> stacks_;
};

/// The pool's stacks are given back to it, not freed, when a fiber ends.
struct KeepStack {
  ctx::stack_context allocate() { return {}; }
  void deallocate(ctx::stack_context &) noexcept {}
};

/// One block being run on this worker.
struct Block {
  std::vector<Thread> threads;
  bool fibers = false;
  StackPool *stacks = nullptr;
};

thread_local Thread *current = nullptr;
thread_local Block *currentBlock = nullptr;

/// What a kernel run without fibers throws at a barrier or warp operation.
struct NeedsFibers {
  const char *what;
};

std::string blockText(const Dim3 &b) { return absl::StrCat("(", b.x, ",", b.y, ",", b.z, ")"); }

std::string threadText(const Thread &t) {
  return absl::StrCat("thread (", t.context.threadIdx.x, ",", t.context.threadIdx.y, ",",
                      t.context.threadIdx.z, ")");
}

const char *nameOf(WarpOp op) { return op == WarpOp::Shuffle ? "a shuffle" : "a vote"; }

/// Suspends the calling fiber in `state` until the scheduler resumes it.
void suspend(State state) {
  Thread *t = current;
  t->state = state;
  void *fake = nullptr;
  startSwitch(&fake, t->schedulerBottom, t->schedulerSize);
  t->scheduler = std::move(t->scheduler).resume();
  finishSwitch(fake, &t->schedulerBottom, &t->schedulerSize);
  if (t->abandon)
    throw Abandoned{};
}

/// Runs fiber `t` until it suspends or ends.
void resume(Thread &t) {
  current = &t;
  void *fake = nullptr;
  startSwitch(&fake, t.stackBottom, t.stackSize);
  t.self = std::move(t.self).resume();
  finishSwitch(fake, nullptr, nullptr);
  current = nullptr;
}

std::string schedule(Block &block, const Options &options, std::mt19937_64 &random);

/// Runs one block's threads as fibers until every one has ended; "" or why
/// not.
std::string runFibers(Block &block, const std::function<void()> &body, const Options &options,
                      std::mt19937_64 &random) {
  for (Thread &t : block.threads) {
    Thread *thread = &t;
    ctx::stack_context stack = block.stacks->at(static_cast<std::size_t>(t.linear));
    t.stackBottom = static_cast<const char *>(stack.sp) - stack.size;
    t.stackSize = stack.size;
    t.self = ctx::fiber(std::allocator_arg, ctx::preallocated(stack.sp, stack.size, stack),
                        KeepStack{}, [thread, &body](ctx::fiber &&scheduler) {
                          finishSwitch(nullptr, &thread->schedulerBottom, &thread->schedulerSize);
                          thread->scheduler = std::move(scheduler);
                          try {
                            if (!thread->abandon)
                              body();
                          } catch (const Abandoned &) {
                          } catch (const ctx::detail::forced_unwind &) {
                            throw; // the fiber is being destroyed
                          } catch (const std::exception &e) {
                            thread->error = e.what();
                          } catch (...) {
                            thread->error = "an exception of no standard type";
                          }
                          thread->state = State::Done;
                          startSwitch(nullptr, thread->schedulerBottom, thread->schedulerSize);
                          return std::move(thread->scheduler);
                        });
  }
  std::string why = schedule(block, options, random);
  // The block gave up: each fiber still suspended (or never run) unwinds
  // its kernel code and ends, so no stack is left holding live frames.
  for (Thread &t : block.threads)
    if (t.state != State::Done) {
      t.abandon = true;
      resume(t);
    }
  return why;
}

/// The scheduler of runFibers: "" when every thread has ended, or why they
/// cannot.
std::string schedule(Block &block, const Options &options, std::mt19937_64 &random) {
  const int n = static_cast<int>(block.threads.size());
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  for (;;) {
    if (options.shuffled)
      std::shuffle(order.begin(), order.end(), random);
    for (int i : order) {
      Thread &t = block.threads[i];
      if (t.state != State::Running)
        continue;
      resume(t);
      if (!t.error.empty())
        return absl::StrCat(threadText(t), ": ", t.error);
    }
    int live = 0;
    for (const Thread &t : block.threads)
      live += t.state != State::Done;
    if (live == 0)
      return "";
    // Warp operations whose lanes have all arrived: every group of lanes
    // waiting in one operation with one mask (a warp may hold several, as
    // split masks do), each released on its own.
    bool released = false;
    std::string stuck; // why a waiting group cannot complete yet
    for (int w = 0; w * kWarp < n; ++w) {
      for (int f = 0; f < kWarp && w * kWarp + f < n; ++f) {
        Thread &lead = block.threads[w * kWarp + f];
        if (lead.state != State::AtWarp)
          continue;
        auto text = [&](const std::string &rest) {
          return absl::StrCat(threadText(lead), " waits in ", nameOf(lead.op), " with mask ",
                              absl::StrFormat("0x%08x", lead.mask), rest);
        };
        bool complete = true;
        for (int l = 0; l < kWarp && complete; ++l) {
          if (!(lead.mask >> l & 1u))
            continue;
          int index = w * kWarp + l;
          if (index >= n)
            return text(absl::StrCat(", which names lane ", l, ", which this block of ", n,
                                     " threads does not have"));
          const Thread &lane = block.threads[index];
          if (lane.state == State::Done)
            return text(absl::StrCat(", but ", threadText(lane), " (lane ", l, ") has exited"));
          if (lane.state == State::AtWarp && lane.op == lead.op && lane.mask == lead.mask)
            continue;
          complete = false;
          if (stuck.empty())
            stuck = lane.state == State::AtBarrier
                        ? text(absl::StrCat(", but ", threadText(lane), " (lane ", l,
                                            ") waits at __syncthreads()"))
                        : text(absl::StrCat(", but ", threadText(lane), " (lane ", l, ") waits in ",
                                            nameOf(lane.op), " with mask ",
                                            absl::StrFormat("0x%08x", lane.mask)));
        }
        if (!complete)
          continue;
        uint64_t ballot = 0;
        for (int l = 0; l < kWarp; ++l)
          if ((lead.mask >> l & 1u) && block.threads[w * kWarp + l].value != 0)
            ballot |= uint64_t{1} << l;
        const unsigned mask = lead.mask;
        for (int l = 0; l < kWarp; ++l) {
          if (!(mask >> l & 1u))
            continue;
          Thread &lane = block.threads[w * kWarp + l];
          if (lane.op == WarpOp::Ballot) {
            lane.result = ballot;
          } else {
            int from = lane.fromLane;
            bool inMask = from >= 0 && from < kWarp && (mask >> from & 1u);
            lane.result = inMask ? block.threads[w * kWarp + from].value : lane.value;
          }
          lane.state = State::Running;
        }
        released = true;
      }
    }
    if (released)
      continue;
    // A barrier: every thread that has not exited waits there.
    int atBarrier = 0;
    const Thread *exited = nullptr, *waiting = nullptr, *inWarp = nullptr;
    for (const Thread &t : block.threads) {
      atBarrier += t.state == State::AtBarrier;
      if (t.state == State::Done && exited == nullptr)
        exited = &t;
      if (t.state == State::AtBarrier && waiting == nullptr)
        waiting = &t;
      if (t.state == State::AtWarp && inWarp == nullptr)
        inWarp = &t;
    }
    if (atBarrier == live && exited == nullptr) {
      for (Thread &t : block.threads)
        t.state = State::Running;
      continue;
    }
    if (!stuck.empty())
      return stuck + ": the warp can never continue";
    if (waiting != nullptr && exited != nullptr)
      return absl::StrCat("divergent __syncthreads(): ", threadText(*waiting),
                          " waits at a barrier that ", threadText(*exited),
                          " never reaches (it has exited; ", n - live, " of the block's ", n,
                          " threads have)");
    if (waiting != nullptr && inWarp != nullptr)
      return absl::StrCat(threadText(*waiting), " waits at __syncthreads() while ",
                          threadText(*inWarp), " waits in ", nameOf(inWarp->op),
                          ": the block can never continue");
    return "the block's threads wait on each other and can never continue";
  }
}

/// Runs one block's threads one after the other; "" or why not.
std::string runLoop(Block &block, const std::function<void()> &body, const Options &options,
                    std::mt19937_64 &random) {
  std::vector<int> order(block.threads.size());
  std::iota(order.begin(), order.end(), 0);
  if (options.shuffled)
    std::shuffle(order.begin(), order.end(), random);
  for (int i : order) {
    current = &block.threads[i];
    try {
      body();
    } catch (const NeedsFibers &needs) {
      current = nullptr;
      return absl::StrCat(threadText(block.threads[i]), " reached ", needs.what,
                          ", but the kernel was launched without fibers (Options::fibers)");
    } catch (const std::exception &e) {
      current = nullptr;
      return absl::StrCat(threadText(block.threads[i]), ": ", e.what());
    } catch (...) {
      current = nullptr;
      return absl::StrCat(threadText(block.threads[i]), ": an exception of no standard type");
    }
    current = nullptr;
    block.threads[i].state = State::Done;
  }
  return "";
}

} // namespace

const ThreadContext &here() {
  if (current == nullptr)
    throw std::logic_error("simt::here(): not inside a kernel run by simt::launch");
  return current->context;
}

void syncthreads() {
  if (currentBlock == nullptr || current == nullptr)
    throw std::logic_error("__syncthreads(): not inside a kernel run by simt::launch");
  if (!currentBlock->fibers)
    throw NeedsFibers{"__syncthreads()"};
  suspend(State::AtBarrier);
}

uint64_t warpExchange(WarpOp op, unsigned mask, uint64_t value, int fromLane) {
  if (currentBlock == nullptr || current == nullptr)
    throw std::logic_error("a warp operation outside a kernel run by simt::launch");
  if (!currentBlock->fibers)
    throw NeedsFibers{op == WarpOp::Shuffle ? "a warp shuffle" : "a warp vote"};
  Thread *t = current;
  t->op = op;
  t->mask = mask;
  t->value = value;
  t->fromLane = fromLane;
  if (!(mask >> (t->linear % kWarp) & 1u))
    throw std::logic_error("a warp operation whose mask leaves out the calling lane");
  suspend(State::AtWarp);
  return t->result;
}

int laneId() { return current == nullptr ? 0 : current->linear % kWarp; }

unsigned activeMask() {
  if (current == nullptr || currentBlock == nullptr)
    return 0;
  int warp = current->linear / kWarp;
  unsigned mask = 0;
  for (int l = 0; l < kWarp; ++l) {
    size_t index = static_cast<size_t>(warp * kWarp + l);
    if (index < currentBlock->threads.size() && currentBlock->threads[index].state != State::Done)
      mask |= 1u << l;
  }
  return mask;
}

Status launch(const std::string &kernel, const runtime::LaunchShape &shape, const Options &options,
              const std::function<void()> &body) {
  SINTER_RETURN_IF_ERROR(runtime::checkCudaLaunchShape(kernel, shape));
  if (shape.sharedBytes != 0)
    return absl::UnimplementedError(
        absl::StrCat("launch of '", kernel, "': ", shape.sharedBytes,
                     " bytes of dynamic shared memory; the CUDA simulator has none (use "
                     "__shared__ arrays)"));
  const Dim3 grid{static_cast<unsigned>(shape.grid[0]), static_cast<unsigned>(shape.grid[1]),
                  static_cast<unsigned>(shape.grid[2])};
  const Dim3 dims{static_cast<unsigned>(shape.block[0]), static_cast<unsigned>(shape.block[1]),
                  static_cast<unsigned>(shape.block[2])};
  const int64_t blocks = shape.grid[0] * shape.grid[1] * shape.grid[2];
  const int threads = static_cast<int>(shape.block[0] * shape.block[1] * shape.block[2]);
  // The blocks' order: shuffled in the checking mode (kept for it only: a
  // grid may have 2^31 blocks).
  std::vector<int64_t> blockOrder;
  if (options.shuffled) {
    constexpr int64_t kShuffledBlocks = int64_t{1} << 24;
    if (blocks > kShuffledBlocks)
      return absl::InvalidArgumentError(absl::StrCat("launch of '", kernel, "': ", blocks,
                                                     " blocks; the checking mode ",
                                                     "shuffles at most ", kShuffledBlocks));
    blockOrder.resize(static_cast<size_t>(blocks));
    std::iota(blockOrder.begin(), blockOrder.end(), 0);
    std::mt19937_64 random(options.seed);
    std::shuffle(blockOrder.begin(), blockOrder.end(), random);
  }
  int workers = options.shuffled ? 1
                : options.workers > 0
                    ? options.workers
                    : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  workers = static_cast<int>(std::min<int64_t>(workers, blocks));

  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::string error;
  auto work = [&](uint64_t seed) {
    std::mt19937_64 local(seed);
    StackPool stacks(options.stackBytes);
    Block block;
    block.fibers = options.fibers;
    block.stacks = &stacks;
    for (int64_t k; !failed.load() && (k = next.fetch_add(1)) < blocks;) {
      int64_t b = options.shuffled ? blockOrder[k] : k;
      Dim3 index{static_cast<unsigned>(b % grid.x), static_cast<unsigned>(b / grid.x % grid.y),
                 static_cast<unsigned>(b / (int64_t{grid.x} * grid.y))};
      block.threads.clear();
      block.threads.resize(threads);
      for (int t = 0; t < threads; ++t) {
        Thread &thread = block.threads[t];
        thread.linear = t;
        thread.context = {{static_cast<unsigned>(t % dims.x),
                           static_cast<unsigned>(t / dims.x % dims.y),
                           static_cast<unsigned>(t / (dims.x * dims.y))},
                          index,
                          dims,
                          grid};
      }
      currentBlock = &block;
      std::string why;
      try {
        why = options.fibers ? runFibers(block, body, options, local)
                             : runLoop(block, body, options, local);
      } catch (const std::exception &e) { // a stack or a thread that could not be had
        why = e.what();
      }
      block.threads.clear(); // unwinds the fibers still suspended
      currentBlock = nullptr;
      if (!why.empty()) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!failed.exchange(true))
          error = absl::StrCat("kernel '", kernel, "', block ", blockText(index), ": ", why);
      }
    }
  };
  if (workers == 1) {
    work(options.seed);
  } else {
    std::vector<std::thread> pool;
    try {
      for (int w = 0; w < workers; ++w)
        pool.emplace_back(work, options.seed + static_cast<uint64_t>(w));
    } catch (const std::system_error &e) {
      std::lock_guard<std::mutex> lock(errorMutex);
      if (!failed.exchange(true))
        error = absl::StrCat("kernel '", kernel, "': could not start ", workers,
                             " worker threads (", e.what(), ")");
    }
    for (std::thread &thread : pool)
      thread.join();
  }
  if (failed.load())
    return absl::FailedPreconditionError(error);
  return absl::OkStatus();
}

namespace {

constexpr std::size_t kGuard = 256;
constexpr unsigned char kGuardByte = 0xfd, kPoisonByte = 0xff;
constexpr std::size_t kQuarantine = 64;

std::size_t roundUp(std::size_t bytes) { return (bytes + kGuard - 1) / kGuard * kGuard; }

} // namespace

Memory::~Memory() {
  for (auto &[pointer, block] : blocks_)
    std::free(block.base);
}

void *Memory::allocate(std::size_t bytes) {
  std::size_t total = kGuard + roundUp(std::max<std::size_t>(bytes, 1)) + kGuard;
  auto *base = static_cast<unsigned char *>(std::aligned_alloc(kGuard, total));
  if (base == nullptr)
    return nullptr;
  std::memset(base, kGuardByte, total);
  std::memset(base + kGuard, kPoisonByte, bytes); // uninitialised: NaN in every float
  std::lock_guard<std::mutex> lock(mutex_);
  blocks_[base + kGuard] = {base, bytes, false};
  return base + kGuard;
}

void Memory::free(void *pointer) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(pointer);
  if (it == blocks_.end() || it->second.freed)
    return;
  std::memset(it->second.base + kGuard, kPoisonByte, it->second.bytes);
  it->second.freed = true;
  quarantine_.push_back(pointer);
  if (quarantine_.size() > kQuarantine) {
    auto old = blocks_.find(quarantine_.front());
    std::free(old->second.base);
    blocks_.erase(old);
    quarantine_.pop_front();
  }
}

Status Memory::check(const std::string &kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &[pointer, block] : blocks_) {
    unsigned char *data = block.base + kGuard;
    std::size_t total = kGuard + roundUp(std::max<std::size_t>(block.bytes, 1)) + kGuard;
    for (std::size_t i = 0; i < kGuard; ++i)
      if (block.base[i] != kGuardByte) {
        std::memset(block.base, kGuardByte, kGuard);
        return absl::FailedPreconditionError(absl::StrCat(
            "kernel '", kernel, "' wrote ", kGuard - i, " bytes before the start of a ",
            block.bytes, "-byte block of device ", "memory (out of bounds)"));
      }
    for (std::size_t i = kGuard + block.bytes; i < total; ++i)
      if (block.base[i] != kGuardByte) {
        std::memset(block.base + kGuard + block.bytes, kGuardByte, total - kGuard - block.bytes);
        return absl::FailedPreconditionError(
            absl::StrCat("kernel '", kernel, "' wrote byte ", i - kGuard, " of a ", block.bytes,
                         "-byte block of device memory (out of bounds)"));
      }
    if (block.freed)
      for (std::size_t i = 0; i < block.bytes; ++i)
        if (data[i] != kPoisonByte) {
          std::memset(data, kPoisonByte, block.bytes);
          return absl::FailedPreconditionError(
              absl::StrCat("kernel '", kernel, "' wrote byte ", i, " of a ", block.bytes,
                           "-byte block of device memory after it was freed"));
        }
  }
  return absl::OkStatus();
}

} // namespace sinter::simt
