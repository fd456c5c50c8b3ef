//===- BufferAssignment.h - a Program's buffers to arena offsets -*- C++ -*-===//
//
// The last layer of memory planning (XLA's buffer assignment): given a
// translated runtime::Program (its launches over buffers, in order), decide
// which results are written into donated arguments (Note [Donation]), which
// buffers are written over an input that dies at their kernel (Note [In-place
// kernels]), and give every other buffer the step allocates an offset in one
// arena (liveness intervals packed by the heap simulator of MemoryPlanner.h).
// Plain C++ with no MLIR: what it asks of the kernels (may this launch write
// its result over that input?) and of the device (how many bytes does an
// allocation take?) comes in as AssignmentRules, from the target.
//
// Note [Donation]
// A step's input that nothing outside the step holds (a parameter, or an
// optimizer's moment, whose new value the step computes: the frontend says
// which) dies with the step, so a result of the same size may be written
// into its memory, as XLA's donated buffers and PyTorch's in-place
// optimizers do: the step then allocates nothing for those results. It is
// safe when every launch that reads the input runs before the one that
// writes the result, or is that launch itself and reads the input only at
// the index it writes: a fusion that computes all its results in one loop
// and reaches the result from that input only through elementwise ops (or
// reshapes, which keep the index) or reductions, which read before the
// kernel writes. (An input another result of the same loop overwrote would
// be read too late, hence "reaches the result": the AdamW updates of
// several small same-sized parameters share a kernel.) The kernel reads
// every result's value at an index before it writes any there (Note [Reads
// before writes] in compiler/lib/Renderers/CpuRenderer.cpp), so a result read
// later in the loop still sees the input. Any donatable input of the
// result's size will do, not only the one it replaces; results are paired
// in the order their kernels run.
//
// Note [In-place kernels]
// A fusion may write a result over one of its inputs that dies with it (its
// last reader; an intermediate of the step, of the result's size) when it
// reads that input only at the index it writes (as for donation). The two
// then share one buffer, and the bytes live at that kernel drop by the
// input's size: an activation written over the matmul output it is computed
// from, one stage of a gradient over the last.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PASSES_BUFFERASSIGNMENT_H
#define SINTER_PASSES_BUFFERASSIGNMENT_H

#include "sinter/Passes/MemoryPlanner.h"
#include "sinter/runtime/Program.h"
#include "sinter/runtime/Status.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sinter::planner {

/// What buffer assignment asks of the target.
struct AssignmentRules {
  /// Whether launch `launch` may write its result `result` over its input
  /// `input` (read at offset 0), reading that input only at the index it
  /// writes (Notes [Donation] and [In-place kernels]). Library calls: false.
  std::function<bool(size_t launch, unsigned input, unsigned result)> writesInPlace;
  /// The bytes a block of `bytes` takes in the device's allocator (its size
  /// class): what a result handed out of the arena keeps.
  std::function<int64_t(int64_t bytes)> allocationSize;
  /// Every arena offset is a multiple of this.
  int64_t alignment = 64;
  /// Whether results are planned in the arena and handed out of it (the
  /// host), or are the caller's memory, as arguments are (a device whose
  /// allocator does not split blocks).
  bool resultsInArena = true;
};

/// Per buffer, the first launch that writes it, or -1 (arguments, constants).
std::vector<int> firstWriters(const runtime::Program &program);

/// `program` as the memory model sees it (Note [One memory model] in
/// MemoryPlanner.h): its buffers as values, its launches as kernels, the
/// in-place pairs `rules` allow, the donated results of program.donors.
Dataflow dataflowOf(const runtime::Program &program, const AssignmentRules &rules);

/// Pairs `program`'s results with donatable arguments of the same size
/// (Note [Donation]): fills program.donors and appends a line per pair to
/// `report`. `donatable` is per argument; null: nothing is donated.
void donateArguments(runtime::Program &program, const std::vector<bool> *donatable,
                     const AssignmentRules &rules, std::string &report);

/// Per buffer, the input buffer whose memory a launch writes it into (Note
/// [In-place kernels]), or -1; a line per pair goes to `report`.
/// REQUIRES: program.donors is filled (donateArguments).
std::vector<int> reuseInPlace(const runtime::Program &program, const AssignmentRules &rules,
                              std::string &report);

/// Gives every buffer the caller does not provide a place in one arena (Note
/// [Planning memory]), `into` sharing the memory of the buffers they are
/// written over, and fills program.inArena, the offsets, arenaBytes and the
/// peak reports (MemoryReport.h). The plan as a table goes to `report`.
Status packArena(runtime::Program &program, const std::vector<int> &into,
                 const AssignmentRules &rules, std::string &report);

/// Appends a copy step per result that no kernel writes in place and the
/// arena does not hold (Note [One list of steps] in sinter/runtime/
/// Program.h), after the last launch, in the results' order; copy steps
/// already there are replaced.
/// REQUIRES: the offsets and program.inArena are set (packArena).
void appendCopies(runtime::Program &program);

/// The three in order: donation, in-place reuse, packing; then the copies.
/// `report` gets the arena's table, then the donated and the in-place
/// pairs.
Status assignBuffers(runtime::Program &program, const std::vector<bool> *donatable,
                     const AssignmentRules &rules, std::string &report);

} // namespace sinter::planner

#endif // SINTER_PASSES_BUFFERASSIGNMENT_H
