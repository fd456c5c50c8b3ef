//===- Distributed.cpp - the process group and the collectives' recording --===//
//
// Note [Collectives in the step] in sinter/Distributed.h.
//
//===----------------------------------------------------------------------===//
#include "sinter/Distributed.h"

#include "Step.h"
#include "TensorImpl.h"
#include "ops/Primitives.h"
#include "sinter/Session.h"
#include "sinter/runtime/ProcessGroup.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace sinter::distributed {

namespace {

std::mutex groupMutex;
std::shared_ptr<runtime::ProcessGroup> group; // guarded by groupMutex

std::shared_ptr<runtime::ProcessGroup> currentGroup() {
  std::lock_guard<std::mutex> lock(groupMutex);
  return group;
}

runtime::Communicator &communicatorFor(std::string_view what, Loc loc) {
  runtime::Communicator *communicator = detail::current_communicator();
  SINTER_CHECK(communicator != nullptr, loc,
               std::string(what) +
                   ": the process group is not initialized: call "
                   "sinter::distributed::init_process_group() first (a world of one when no "
                   "launcher started this process)");
  return *communicator;
}

void wait(runtime::Communicator &communicator, runtime::Communicator::Ticket ticket, Loc loc) {
  Status status = communicator.wait(ticket);
  SINTER_CHECK(status.ok(), loc, std::string(status.message()));
}

} // namespace

void init_process_group(Loc loc) {
  std::lock_guard<std::mutex> lock(groupMutex);
  SINTER_CHECK(group == nullptr, loc,
               "init_process_group: the process group is already initialized (call "
               "destroy_process_group() first to join another)");
  StatusOr<runtime::World> world =
      runtime::worldFromEnvironment([](const char *name) { return std::getenv(name); });
  SINTER_CHECK(world.ok(), loc, "init_process_group: " + std::string(world.status().message()));
  StatusOr<std::unique_ptr<runtime::ProcessGroup>> started =
      runtime::startProcessGroup(*world, runtime::processGroupOptionsFromEnvironment());
  SINTER_CHECK(started.ok(), loc, "init_process_group: " + std::string(started.status().message()));
  group = std::move(*started);
}

bool is_initialized() { return currentGroup() != nullptr; }

void destroy_process_group() {
  std::lock_guard<std::mutex> lock(groupMutex);
  group.reset();
}

std::shared_ptr<runtime::ProcessGroup> process_group() { return currentGroup(); }

int get_rank() {
  auto current = currentGroup();
  return current ? current->world.rank : 0;
}

int get_world_size() {
  auto current = currentGroup();
  return current ? current->world.size : 1;
}

int get_local_rank() {
  auto current = currentGroup();
  return current ? current->world.localRank : 0;
}

int get_local_world_size() {
  auto current = currentGroup();
  return current ? current->world.localSize : 1;
}

runtime::Communicator *detail::current_communicator() {
  const std::shared_ptr<runtime::ProcessGroup> &mine = Session::current().settings().process_group;
  if (mine)
    return mine->communicator.get();
  // The process's group lives until destroy_process_group, which a program
  // calls when no step runs.
  auto current = currentGroup();
  return current ? current->communicator.get() : nullptr;
}

void all_reduce(Tensor &tensor, ReduceOp op, Loc loc) {
  SINTER_CHECK(tensor.defined(), loc, "all_reduce: the tensor is undefined");
  (void)communicatorFor("all_reduce", loc);
  SINTER_CHECK(op != ReduceOp::Mean || isFloatingPoint(tensor.dtype()), loc,
               "all_reduce: a Mean over ranks needs a floating tensor, not " +
                   std::string(name(tensor.dtype())));
  Tensor reduced = prim::allReduce(tensor, static_cast<int>(op), loc);
  if (sinter::detail::needsGrad(tensor))
    tensor = reduced;
  else
    tensor.impl()->node = reduced.impl()->node;
}

void reduce_gradients(const std::vector<Tensor> &parameters, Loc loc) {
  (void)communicatorFor("reduce_gradients", loc);
  NoGradGuard noGrad;
  for (const Tensor &parameter : parameters) {
    Tensor grad = parameter.grad();
    if (!grad.defined())
      continue;
    parameter.set_grad(prim::allReduce(grad, static_cast<int>(ReduceOp::Mean), loc));
  }
}

void broadcast(const std::vector<Tensor> &tensors, int source, Loc loc) {
  runtime::Communicator &communicator = communicatorFor("broadcast", loc);
  SINTER_CHECK(source >= 0 && source < communicator.size(), loc,
               "broadcast: rank " + std::to_string(source) + " is not in a world of " +
                   std::to_string(communicator.size()));
  for (const Tensor &tensor : tensors) {
    SINTER_CHECK(tensor.defined(), loc, "broadcast: a tensor is undefined");
    std::shared_ptr<const lazy::Value> value = sinter::detail::valueOf(tensor, loc);
    int64_t bytes = value->size() * static_cast<int64_t>(elementSize(value->dtype()));
    lazy::Value::Bytes copy = lazy::Value::allocate(bytes);
    std::memcpy(copy.get(), value->bytes(), static_cast<size_t>(bytes));
    wait(communicator, communicator.broadcast(copy.get(), bytes, source, "broadcast"), loc);
    Tensor received = sinter::detail::fromValue(
        std::make_shared<lazy::Value>(copy, value->size(), value->dtype()), tensor.shape(),
        tensor.dtype(), tensor.device(), loc);
    tensor.impl()->node = received.impl()->node;
  }
}

void barrier(Loc loc) {
  runtime::Communicator &communicator = communicatorFor("barrier", loc);
  wait(communicator, communicator.barrier("barrier"), loc);
}

} // namespace sinter::distributed
