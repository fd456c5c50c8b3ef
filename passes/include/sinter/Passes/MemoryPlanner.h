//===- MemoryPlanner.h - buffers to offsets in one arena --------*- C++ -*-===//
//
// Note [Planning memory]
// Every buffer of a program is live over an interval of its launches: from
// the launch that writes it to the last one that reads it. Buffers whose
// intervals overlap must not share bytes; the others may. The planner packs
// the buffers into one arena greedily: in some order, each buffer goes into
// the smallest gap that holds it between the buffers already placed whose
// lives overlap its own (best fit), else after them. XLA's "global
// decreasing size, best fit" places the largest first; placing the longest
// lived, the largest in bytes times launches, or the earliest first wins on
// other programs (a buffer that spans the step, placed first, leaves whole
// gaps for the short ones). planSmallest tries each order and keeps the
// smallest arena, as XLA's heap simulator chooses among its algorithms. The
// plan is known before anything runs, so the arena's size is the step's
// exact peak. Plain C++ with no MLIR: the memory-planning passes and their
// tests build on it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PASSES_MEMORYPLANNER_H
#define SINTER_PASSES_MEMORYPLANNER_H

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace sinter::planner {

/// A buffer's size and the launches during which it is live (inclusive).
struct Live {
  int64_t bytes = 0;
  int64_t first = 0;
  int64_t last = 0;
};

/// The order in which a greedy packing places buffers (ties: earlier first
/// use, then index, so plans are deterministic).
enum class PackingOrder {
  Size,     // the most bytes first (XLA's global decreasing size)
  Lifetime, // the most launches first
  Area,     // the most bytes times launches first
  FirstUse, // the earliest written first, larger first among those
};
const char *packingOrderName(PackingOrder order);

struct Plan {
  std::vector<int64_t> offsets; // per buffer, a multiple of the alignment
  int64_t size = 0;             // the arena: the highest end of any buffer
  PackingOrder order = PackingOrder::Size;
};

/// Packs `buffers` into one arena in `order`, best fit, each offset a
/// multiple of `alignment`.
Plan planGreedy(const std::vector<Live> &buffers, PackingOrder order, int64_t alignment = 64);
/// planGreedy in decreasing size.
Plan planBestFit(const std::vector<Live> &buffers, int64_t alignment = 64);
/// The smallest of planGreedy's plans over every order (Size on a tie).
Plan planSmallest(const std::vector<Live> &buffers, int64_t alignment = 64);

/// Checks that no two buffers live at the same time share a byte and that
/// every buffer lies inside the arena; returns "" or what is wrong.
std::string verifyPlan(const std::vector<Live> &buffers, const Plan &plan);

/// Note [Scheduling for memory]
/// The order of a step's kernels decides which values are live together: a
/// gradient kept while an unrelated branch runs first costs its bytes for
/// that whole branch. The scheduler reorders the kernels, respecting their
/// dependencies, by list scheduling: of the kernels whose inputs are ready,
/// run next the one that frees the most bytes net of what it allocates (its
/// inputs it reads last, minus its outputs), ties broken by the original
/// order. Greedy orders can lose to the original on some graphs, so the
/// original is kept unless the new order's simulated peak is lower. Values
/// are the kernels' results; a value written by no kernel is an argument
/// (held by the caller: no cost) or a constant (live from its first
/// reader); a value the step returns lives to the end of the step (Note
/// [Results in the arena] in sinter/runtime/Program.h), unless it may be
/// written into an argument's memory (no cost). A kernel may also have to
/// wait for kernels it reads nothing from: an update that may be written
/// into its parameter's memory runs after every other reader of the
/// parameter.
/// A data-parallel step's collectives trade memory for time instead (Note
/// [Gradient buckets] in sinter/Passes/Buckets.h): a ready collective runs
/// first, so that its gradient goes on the network as soon as it exists,
/// and a kernel that reads a collective's result runs only when nothing
/// else is ready, so that the rest of the backward pass runs while the
/// gradients are reduced. The reduced gradients then live until the
/// optimizer's updates at the end, as in PyTorch's DDP; for such a step the
/// new order is taken whatever its peak. The order depends on the graph's
/// structure: ranks whose steps differ in structure (not only in a slice's
/// offset) may start their collectives in different orders.

/// A program as kernels over values: what the scheduling and
/// rematerialization passes simulate and what buffer assignment plans (Note
/// [One memory model]).
struct Dataflow {
  struct Kernel {
    std::vector<int> reads, writes;
    /// Kernels that must run before this one though it reads nothing they
    /// write: the readers of a value this one overwrites (an update written
    /// into its parameter's memory, Note [Donation]).
    std::vector<int> after = {};
    /// Per read, the byte offset it reads its value at (a view at an
    /// offset: never written over); empty: all 0.
    std::vector<int64_t> readOffsets = {};
    /// (read, write) index pairs: the kernel reads reads[r] only at the
    /// index it writes writes[w], so it may write that result over it
    /// (Note [In-place kernels]; the target's kernel plan says which).
    std::vector<std::pair<unsigned, unsigned>> inPlace = {};
    /// How many of `writes` are results; the rest are its scratch, live
    /// while it runs. -1: all.
    int results = -1;
    /// A collective between ranks (Note [Scheduling for memory]).
    bool collective = false;
  };
  std::vector<int64_t> bytes; // per value
  std::vector<bool> argument; // per value: the caller's (costs nothing)
  std::vector<bool> returned; // per value: the step returns it (live to the end)
  /// Per value: returned, and may be written into the memory of an argument
  /// it replaces (Note [Donation]): costs nothing.
  std::vector<bool> donated;
  std::vector<Kernel> kernels; // in the current order
  /// The bytes a block of `bytes` takes in the device's allocator: what a
  /// result handed out of the arena keeps (its size class). Empty: `bytes`.
  std::function<int64_t(int64_t)> allocationSize = {};
  /// Every buffer in the arena starts at a multiple of this.
  int64_t alignment = 1;
  /// Whether returned values are held in the arena (and handed out of it);
  /// false: they are the caller's, as arguments are.
  bool resultsInArena = true;
};

/// Note [One memory model]
/// The passes that trade memory (scheduling, rematerialization) and buffer
/// assignment see a step the same way: as a Dataflow, and through the same
/// three functions below. writtenOver pairs results with the inputs they
/// may be written over (Note [In-place kernels]); lifetimesOf gives each
/// value its interval and the bytes the arena gives it (aligned; a result
/// handed out of the arena, its size class; a value written over another
/// shares that one's interval and bytes); liveBytes sums them per kernel
/// and packedArena packs them (Note [Planning memory]). Buffer assignment
/// builds its Dataflow from the translated Program (dataflowOf in
/// BufferAssignment.h), the passes from the IR (passes/lib/Dataflow.h) with
/// the same answers from the target (Rules in sinter/Passes/Passes.h), so
/// under a budget the rematerialization pass's estimate is the arena the
/// step is planned with. What the IR does not know yet is listed in
/// passes/lib/Dataflow.h (Note [What the IR's dataflow does not know]).

/// Whether `kernel` may write its result `result` over its input value
/// `input`: every time it reads it, at offset 0 and only at the index it
/// writes (Notes [Donation] and [In-place kernels]).
bool mayWriteOver(const Dataflow::Kernel &kernel, int input, unsigned result);

/// Per value, the value whose memory its kernel writes it over, or -1: a
/// result of a kernel (not returned) over an input of the same bytes that
/// dies at that kernel (not the caller's, not a constant, read there only
/// at offset 0 and only at the index written), each input taken once.
std::vector<int> writtenOver(const Dataflow &flow, const std::vector<int> &order);

/// The positions in `values` in the order their first writers run
/// (`writer`: per value, its first writer's position, -1 for none); ties
/// keep their order.
std::vector<size_t> byFirstWriter(const std::vector<int> &values, const std::vector<int> &writer);

/// Note [Donation]: per value of `results` (the step's return, in order),
/// the index in `arguments` of the argument whose memory it is written
/// into, or -1. Results are taken in the order they are written, each the
/// first argument `donatable` allows (null: any) of its bytes, not returned
/// itself and not taken, that its writer runs after every reader of, or is
/// the last reader of and may write over (mayWriteOver); a value returned
/// twice is paired once. Positions are those of flow.kernels.
std::vector<int> donorsOf(const Dataflow &flow, const std::vector<int> &arguments,
                          const std::vector<int> &results, const std::vector<bool> *donatable);

/// Each value's bytes in the arena and its life in `order` (positions;
/// constants from their first reader, returned values to the end), and the
/// values the arena holds: not the caller's, not written over another (`into`,
/// from writtenOver), not empty.
struct Lifetimes {
  std::vector<Live> live; // per value
  std::vector<int> held;  // the arena's values, ascending
};
Lifetimes lifetimesOf(const Dataflow &flow, const std::vector<int> &order,
                      const std::vector<int> &into);

/// Live bytes after each kernel of `order` runs (at index k: while kernel
/// order[k] runs, its outputs and every value still to be read, as the
/// arena holds them), and the highest of them.
std::vector<int64_t> liveBytes(const Dataflow &flow, const std::vector<int> &order);
int64_t simulatedPeak(const Dataflow &flow, const std::vector<int> &order);
/// The arena the values of `flow` in `order` pack into (planSmallest): at
/// least simulatedPeak, more by what packing loses to gaps.
int64_t packedArena(const Dataflow &flow, const std::vector<int> &order);
/// Whether packedArena(flow, order) is at most `limit`, found sooner: each
/// packing order stops once past it, and none is tried when the live bytes
/// are.
bool fitsArena(const Dataflow &flow, const std::vector<int> &order, int64_t limit);

/// An order of flow.kernels that respects dependencies (reads and `after`)
/// and whose simulated peak is at most that of the current order, which is
/// kept on a tie when it respects them too (Note [Scheduling for memory]).
std::vector<int> scheduleForMemory(const Dataflow &flow);

} // namespace sinter::planner

#endif // SINTER_PASSES_MEMORYPLANNER_H
