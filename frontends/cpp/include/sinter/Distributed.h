//===- Distributed.h - data-parallel training: ranks and collectives -*- C++ -*-===//
//
// Note [Collectives in the step]
// PyTorch's torch.distributed and PyTorch/XLA's xm.reduce_gradients, for
// Sinter's lazy steps:
//
//   sinter::distributed::init_process_group();   // from sinter-run, torchrun, srun, mpirun
//   ...
//   loss.backward();
//   sinter::distributed::reduce_gradients(model.parameters());  // mean over ranks
//   optimizer.step();
//   sinter::mark_step();
//
// An all-reduce is recorded like any op and compiled into the step
// (sinter.all_reduce, a Program step of kind AllReduce that the runtime runs
// through the process group's communicator: Note [The communicator] in
// sinter/runtime/Communicator.h), so each rank's step computes its
// gradients, exchanges them and updates its parameters in one program. The
// same code runs in a world of one (no launcher): every collective leaves
// its values as they are. Every rank must record the same collectives in
// the same order (the same program), as with any collective library.
//
// A collective fails rather than hangs: a rank that dies or stops makes the
// others' step throw sinter::Error within the collective timeout
// (SINTER_COLLECTIVE_TIMEOUT, 300 s), naming the collective, the user's
// line and, where it can, the rank ("all_reduce f32[256] <- train.cpp:40:
// ... Connection reset by peer: rank 1 ([10.77.0.2])"); the group is then
// poisoned and every later collective fails with the first failure.
// SINTER_DETERMINISTIC_COLLECTIVES=1 reduces in rank order, so a step on
// N ranks equals, bit for bit, one process that adds the N micro-batches'
// gradients in order.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_DISTRIBUTED_H
#define SINTER_DISTRIBUTED_H

#include "sinter/Error.h"
#include "sinter/Tensor.h"

#include <memory>
#include <vector>

namespace sinter::runtime {
class Communicator;
struct ProcessGroup;
} // namespace sinter::runtime

namespace sinter::distributed {

/// How all_reduce combines the ranks' values (torch.distributed.ReduceOp;
/// Mean is PyTorch's AVG: floating tensors only).
enum class ReduceOp { Sum, Mean, Max, Min };

/// Joins the process group its launcher describes (Note [Finding the world]
/// in sinter/runtime/World.h): rank 0 (or sinter-run's agent) hosts the
/// rendezvous store, every rank connects to every other through Gloo. A
/// process started by no launcher is a world of one. Throws sinter::Error
/// when the environment is wrong or a rank does not arrive within the
/// timeout, and when the group is already initialized.
void init_process_group(Loc loc = Loc::current());
bool is_initialized();
/// Leaves the group (its connections close); init_process_group may be
/// called again.
void destroy_process_group();

/// 0 and 1 when the group is not initialized.
int get_rank();
int get_world_size();
int get_local_rank();
int get_local_world_size();

/// Replaces `tensor`'s values (for every handle to it) by their combination
/// over the ranks, recorded lazily and computed in the step. A tensor that
/// requires grad gets a new handle instead, with a gradient (Sum: the sum
/// of the gradients over the ranks; Mean: their mean; Max and Min have
/// none). REQUIRES: an initialized group; Mean: a floating tensor.
void all_reduce(Tensor &tensor, ReduceOp op = ReduceOp::Sum, Loc loc = Loc::current());

/// The combination over the ranks of `input`'s r-th slice, on rank r
/// (torch.distributed.reduce_scatter_tensor, returning its output): a 1-D
/// tensor whose length the world size divides, recorded lazily. Sum and
/// Mean have gradients (an all_gather).
Tensor reduce_scatter(const Tensor &input, ReduceOp op = ReduceOp::Sum, Loc loc = Loc::current());

/// Every rank's 1-D `input`, in rank order (torch.distributed.
/// all_gather_into_tensor, returning its output), recorded lazily; its
/// gradient is a reduce_scatter (Sum).
Tensor all_gather(const Tensor &input, Loc loc = Loc::current());

/// Each parameter's gradient replaced by its mean over the ranks (PyTorch/
/// XLA's xm.reduce_gradients), in the step; parameters without a gradient
/// are skipped.
void reduce_gradients(const std::vector<Tensor> &parameters, Loc loc = Loc::current());

/// Rank `source`'s values of each tensor into every rank's, now (the
/// tensors are computed first): the parameters of a model that each rank
/// initialized, so that every rank starts from rank 0's.
void broadcast(const std::vector<Tensor> &tensors, int source = 0, Loc loc = Loc::current());

/// Returns once every rank has called it.
void barrier(Loc loc = Loc::current());

/// The process group (null when not initialized), for sinter::Settings.
std::shared_ptr<runtime::ProcessGroup> process_group();

namespace detail {
/// The communicator a step of the current session runs its collectives
/// through: its Settings::process_group, else the process's group; null
/// when there is none.
runtime::Communicator *current_communicator();
} // namespace detail

} // namespace sinter::distributed

#endif // SINTER_DISTRIBUTED_H
