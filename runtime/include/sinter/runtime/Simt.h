//===- Simt.h - the CUDA simulator: CUDA C++ run on the CPU ------*- C++ -*-===//
//
// Note [The CUDA simulator]
// No machine that builds and tests Sinter has a GPU, so the CUDA C++ that
// NVRTC compiles for the GPU is also compiled by the host compiler, against
// the SIMT prelude kernels/cuda/simt.h, and run here: the same text, so what
// is tested is what runs on the GPU (as Numba's NUMBA_ENABLE_CUDASIM, but at
// the level of the CUDA C++).
//
// A launch runs the grid's blocks on worker threads, one block at a time per
// worker. A kernel without barriers or warp operations runs its threads as a
// plain loop; one with them (Options::fibers) runs each thread of a block as
// a fiber (Boost.Context) on the block's worker: a fiber runs until it
// reaches __syncthreads(), a warp operation or its end, then the next one
// runs. So:
// - `__shared__` is per block: a thread_local static, which every fiber of
//   the block shares and no other block sees;
// - __syncthreads() releases the block when every thread that has not
//   exited waits there; a thread that exits while others wait is a
//   divergent barrier, reported (CUDA leaves it undefined; it hangs or
//   corrupts on the GPU);
// - a warp operation (__shfl_*_sync, __ballot_sync, __any_sync, __all_sync)
//   is a rendezvous of the lanes its mask names: every result is computed
//   when the last arrives (two phases, so no lane reads a value another has
//   already replaced); a lane of the mask that exited or waits at a barrier
//   instead is reported;
// - atomics are the host's atomics (blocks run on several threads at once).
// In the checking mode (Options::shuffled) the threads between two barriers
// run in a random order (and blocks one at a time), so a missing barrier
// changes the result instead of passing by luck.
//
// What it does not model: shared memory's contents at a block's start (they
// are what the worker's previous block of the kernel left, as stale as on
// the GPU, not poisoned); the memory model beyond barriers and atomics
// (every write is visible at once to the fibers of a block), warp-
// synchronous code without _sync operations, tensor cores, asynchronous
// copies (cp.async, TMA), dynamic shared memory (`extern __shared__`),
// timing and occupancy. Those are for a real GPU (tools/gpu_check.sh).
//
// A block that fails (a reported bug) abandons its fibers: each unwinds its
// kernel code and ends before the block's stacks are reused. Every stack
// switch is said to AddressSanitizer in a sanitized build, so it reports
// nothing false about fiber stacks.
//
// Device memory is host memory from simt::Memory: each block has guard
// zones before and after it, freed blocks are poisoned and held back, and
// after every launch the guards and the poison are checked, so a write out
// of bounds or after free is reported with the kernel's name.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_SIMT_H
#define SINTER_RUNTIME_SIMT_H

#include "sinter/runtime/LaunchShape.h"
#include "sinter/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace sinter::simt {

/// CUDA's uint3 / dim3.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// What a simulated thread sees of itself.
struct ThreadContext {
  Dim3 threadIdx, blockIdx, blockDim, gridDim;
};

/// The calling simulated thread's context. Inside a kernel run by launch()
/// only; elsewhere it throws.
const ThreadContext &here();

struct Options {
  /// Threads as fibers, for kernels with barriers or warp operations
  /// (a plain loop otherwise; such a kernel reaching one is reported).
  bool fibers = false;
  /// The checking mode: the threads between two barriers (and the
  /// blocks) in a random order from `seed`.
  bool shuffled = false;
  uint64_t seed = 0;
  /// Worker threads for the blocks; 0: the machine's cores (1 when
  /// shuffled).
  int workers = 0;
  /// Each fiber's stack.
  std::size_t stackBytes = 256 * 1024;
};

/// Runs `body` as every thread of the grid `shape` (its grid and block;
/// dynamic shared memory is not simulated and must be 0). Returns an error
/// naming `kernel`, the block and the threads for a divergent barrier or
/// warp operation, a barrier in a kernel launched without fibers, or a
/// shape CUDA would refuse.
Status launch(const std::string &kernel, const runtime::LaunchShape &shape, const Options &options,
              const std::function<void()> &body);

/// __syncthreads().
void syncthreads();

/// The kinds of warp operations (for messages and rendezvous checks).
enum class WarpOp { Shuffle, Ballot };

/// A warp rendezvous: the calling lane posts `value` and the lane it reads
/// (`fromLane`; for a ballot, unused); returns, when every lane of `mask`
/// has arrived, the value `fromLane` posted (a shuffle) or the mask of the
/// lanes whose value is non-zero (a ballot). A source lane outside the mask
/// returns the caller's own value, as the GPU's shuffle does.
uint64_t warpExchange(WarpOp op, unsigned mask, uint64_t value, int fromLane);

/// The lane of the calling thread in its warp (0..31), and the mask of
/// the warp's lanes that have not exited.
int laneId();
unsigned activeMask();

/// Device memory of the simulated device: host memory with a guard zone
/// before and after every block, its bytes poisoned (0xff: a NaN in every
/// float) when freed and held back for the next checks.
class Memory {
public:
  Memory() = default;
  Memory(const Memory &) = delete;
  Memory &operator=(const Memory &) = delete;
  ~Memory();

  /// `bytes` of memory, 256-byte aligned, or nullptr when the host has none.
  void *allocate(std::size_t bytes);
  /// Poisons and holds back a block allocate() gave.
  void free(void *pointer);
  /// Whether every guard zone and every freed block is as it was left:
  /// else an error naming `kernel`, the block's size and the offset of the
  /// first byte written out of bounds or after free.
  Status check(const std::string &kernel);

private:
  struct Block {
    unsigned char *base = nullptr; // guard | data | guard
    std::size_t bytes = 0;
    bool freed = false;
  };
  std::mutex mutex_;
  std::map<const void *, Block> blocks_;
  std::deque<const void *> quarantine_;
};

} // namespace sinter::simt

#endif // SINTER_RUNTIME_SIMT_H
