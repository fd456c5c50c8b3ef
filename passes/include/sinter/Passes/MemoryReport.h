//===- MemoryReport.h - what holds memory at a step's peak ------*- C++ -*-===//
//
// Note [Memory by category]
// What holds memory at a step's peak, by what it is in training, from the
// phase of the ops that write and read each buffer (the frontend marks
// the backward pass and optimizer updates, sinter::PhaseGuard): the inputs
// by their role in the signature (Note [The step's signature] in
// sinter/runtime/Program.h): parameters (an update reads them and the
// forward pass too), optimizer state (only updates read it; step scalars
// count here), the batch (the rest, random keys among them). A
// result the backward pass writes is a gradient; one an update writes is a
// new value that could not be written in place. In the arena, a buffer the
// forward pass writes and a later phase reads is an activation kept for
// the backward pass; the others are temporaries, or a kernel's workspace.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PASSES_MEMORYREPORT_H
#define SINTER_PASSES_MEMORYREPORT_H

#include "sinter/Passes/MemoryPlanner.h"
#include "sinter/runtime/Program.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace sinter::planner {

/// Per argument of `program`, its role by the phases of the launches that
/// read it (Note [Memory by category]): Parameter, OptimizerState or
/// BatchInput. For programs without a signature (built by hand):
/// translation gives each argument its role by the phase of every op that
/// reads it (Note [The step's signature] in sinter/runtime/Program.h),
/// which a kernel's phase (its latest op's) can hide.
std::vector<runtime::Program::Role> argumentRolesByReaders(const runtime::Program &program);

/// Fills program.report: peakUses, peakCategories, peakWorkspaceBytes and
/// peakTensorBytes: the arena buffers `planned` (indices into `live`, each
/// buffer's bytes and life) live at the launch where the most of their
/// bytes are, and the results the caller allocates for the whole run, by
/// the user's line of the launch that writes them and by category (Note
/// [Memory by category]). Arguments count at `allocationSize` of their
/// bytes, as the allocator holds them.
/// REQUIRES: program.donors and the buffers' offsets are set.
void reportPeak(runtime::Program &program, const std::vector<Live> &live,
                const std::vector<int> &planned,
                const std::function<int64_t(int64_t)> &allocationSize);

} // namespace sinter::planner

#endif // SINTER_PASSES_MEMORYREPORT_H
