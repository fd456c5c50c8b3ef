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
#include "sinter/lazy/Graph.h"
#include "sinter/runtime/ProcessGroup.h"

#include "Format.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

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

/// Every rank's `mine` (`words` int64 each), in rank order.
std::vector<int64_t> gatherWords(runtime::Communicator &communicator, std::vector<int64_t> mine,
                                 const char *what, Loc loc) {
  std::vector<int64_t> all(mine.size() * static_cast<size_t>(communicator.size()));
  auto bytes = static_cast<int64_t>(mine.size() * sizeof(int64_t));
  wait(communicator, communicator.allGather(mine.data(), all.data(), bytes, what), loc);
  return all;
}

bool isCollective(lazy::Op op) {
  return op == lazy::Op::AllReduce || op == lazy::Op::ReduceScatter || op == lazy::Op::AllGather;
}

/// What must agree between the ranks about one collective: which it is,
/// its reduction, dtype and shape, as kRecord words another rank can read
/// back (the sizes past kDims only through the element count).
constexpr size_t kDims = 6, kRecord = 5 + kDims;
void appendRecord(const lazy::Node &node, std::vector<int64_t> &words) {
  size_t at = words.size();
  words.resize(at + kRecord, 0);
  words[at] = static_cast<int64_t>(node.op);
  words[at + 1] = node.op == lazy::Op::AllGather ? -1 : node.attrs.kind;
  words[at + 2] = static_cast<int64_t>(node.dtype);
  words[at + 3] = static_cast<int64_t>(node.shape.size());
  words[at + 4] = numel(node.shape);
  for (size_t d = 0; d < node.shape.size() && d < kDims; ++d)
    words[at + 5 + d] = node.shape[d];
}

std::string describeRecord(const int64_t *words, int64_t count, int64_t index) {
  if (index >= count)
    return cat("none (", count, " collectives)");
  auto op = static_cast<lazy::Op>(words[0]);
  Shape shape(words + 5, words + 5 + std::min<int64_t>(words[3], kDims));
  std::string reduction =
      words[1] >= 0 && words[1] < 4
          ? cat(" (", runtime::reduceOpName(static_cast<runtime::ReduceOp>(words[1])), ")")
          : "";
  return cat(isCollective(op) ? lazy::name(op) : "?", reduction, " ",
             name(static_cast<DType>(words[2])), toString(shape),
             words[3] > static_cast<int64_t>(kDims) ? cat(" (", words[4], " elements)") : "");
}

/// The step structures of each group that need no comparison (again):
/// compared and equal, or without collectives.
std::mutex checkedMutex;
std::set<std::pair<const runtime::Communicator *, uint64_t>> checked; // guarded by checkedMutex

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
  if (group != nullptr) {
    std::lock_guard<std::mutex> lockChecked(checkedMutex);
    std::erase_if(checked,
                  [&](const auto &entry) { return entry.first == group->communicator.get(); });
  }
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

namespace {
/// The communicator a reduction `what` of `tensor` by `op` runs through,
/// once the reduction is one that can be.
runtime::Communicator &reductionOf(const Tensor &tensor, ReduceOp op, const char *what, Loc loc) {
  SINTER_CHECK(tensor.defined(), loc, std::string(what) + ": the tensor is undefined");
  runtime::Communicator &communicator = communicatorFor(what, loc);
  SINTER_CHECK(op != ReduceOp::Mean || isFloatingPoint(tensor.dtype()), loc,
               std::string(what) + ": a Mean over ranks needs a floating tensor, not " +
                   std::string(name(tensor.dtype())));
  return communicator;
}
} // namespace

void all_reduce(Tensor &tensor, ReduceOp op, Loc loc) {
  (void)reductionOf(tensor, op, "all_reduce", loc);
  Tensor reduced = prim::allReduce(tensor, static_cast<int>(op), loc);
  if (sinter::detail::needsGrad(tensor))
    tensor = reduced;
  else
    sinter::detail::setNode(*tensor.impl(), sinter::detail::nodeOf(reduced));
}

Tensor reduce_scatter(const Tensor &input, ReduceOp op, Loc loc) {
  runtime::Communicator &communicator = reductionOf(input, op, "reduce_scatter", loc);
  return prim::reduceScatter(input, static_cast<int>(op), communicator.size(), loc);
}

Tensor all_gather(const Tensor &input, Loc loc) {
  SINTER_CHECK(input.defined(), loc, "all_gather: the tensor is undefined");
  runtime::Communicator &communicator = communicatorFor("all_gather", loc);
  return prim::allGather(input, communicator.size(), loc);
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
    sinter::detail::setNode(*tensor.impl(), sinter::detail::nodeOf(received));
  }
}

void barrier(Loc loc) {
  runtime::Communicator &communicator = communicatorFor("barrier", loc);
  wait(communicator, communicator.barrier("barrier"), loc);
}

} // namespace sinter::distributed

namespace sinter::detail {

using distributed::appendRecord;
using distributed::checked;
using distributed::checkedMutex;
using distributed::describeRecord;
using distributed::gatherWords;
using distributed::kRecord;

/// Note [The same step on every rank]
/// A collective pairs with the collective of the same position on every
/// other rank, so ranks that record different collectives (a model whose
/// width depends on the rank, a gradient only some ranks have, a branch only
/// rank 0 takes) would exchange mismatched buffers, or wait for each other
/// until the timeout. The first time a rank runs a step with collectives
/// (each structure once per process group), the ranks compare the step's
/// collectives, in the order of the graph: their reduction, dtype and shape.
/// One all-gather of their count and a hash; only when those differ, one of
/// every collective's description, so that every rank stops with the same
/// message naming the first collective that differs on each rank, and its
/// own source line. The rest of the graph may differ between ranks (each
/// slices its own rows of a batch at its own offset), and steps without
/// collectives are not compared (rank 0 may compute what the others do not).
void checkSameStepOnEveryRank(const std::vector<lazy::NodePtr> &outputs, uint64_t structure,
                              const char *what, Loc loc) {
  runtime::Communicator *communicator = distributed::detail::current_communicator();
  if (communicator == nullptr || communicator->size() == 1)
    return;
  // Every step of a training loop comes here: a structure seen before costs
  // one lookup, not a walk of its graph.
  auto remember = [&] {
    std::lock_guard<std::mutex> lock(checkedMutex);
    checked.insert({communicator, structure});
  };
  {
    std::lock_guard<std::mutex> lock(checkedMutex);
    if (checked.count({communicator, structure}))
      return;
  }
  std::vector<const lazy::Node *> collectives;
  for (const lazy::Node *node : lazy::topological_order(outputs))
    if (distributed::isCollective(node->op))
      collectives.push_back(node);
  if (collectives.empty()) {
    remember();
    return;
  }
  std::vector<int64_t> records;
  for (const lazy::Node *node : collectives)
    appendRecord(*node, records);
  uint64_t hash = 14695981039346656037ull; // FNV-1a: the same in every process
  for (int64_t word : records)
    hash = (hash ^ static_cast<uint64_t>(word)) * 1099511628211ull;
  auto count = static_cast<int64_t>(collectives.size());
  const char *comparing = "comparing the ranks' collectives";
  std::vector<int64_t> heads =
      gatherWords(*communicator, {count, static_cast<int64_t>(hash)}, comparing, loc);
  int size = communicator->size(), rank = communicator->rank();
  bool same = true;
  int64_t most = 0;
  for (int r = 0; r < size; ++r) {
    same = same && heads[2 * r] == count && heads[2 * r + 1] == heads[1];
    most = std::max(most, heads[2 * r]);
  }
  if (same) {
    remember();
    return;
  }
  records.resize(static_cast<size_t>(most) * kRecord, 0);
  std::vector<int64_t> all = gatherWords(*communicator, records, comparing, loc);
  auto record = [&](int r, int64_t i) {
    return all.data() + (static_cast<size_t>(r) * most + i) * kRecord;
  };
  auto countOf = [&](int r) { return heads[2 * r]; };
  int64_t first = 0;
  for (; first < most; ++first) {
    bool differs = false;
    for (int r = 1; r < size; ++r)
      differs = differs || (first < countOf(r)) != (first < countOf(0)) ||
                !std::equal(record(r, first), record(r, first) + kRecord, record(0, first));
    if (differs)
      break;
  }
  std::string each;
  for (int r = 0; r < size; ++r)
    each += cat(r == 0 ? "" : "; ", "rank ", r, ": ",
                describeRecord(record(r, first), countOf(r), first));
  std::string mine =
      first < count ? cat("this rank's (", rank, ") was recorded at ",
                          collectives[first]->loc.file_name(), ":", collectives[first]->loc.line())
                    : cat("this rank (", rank, ") has ", count, " collectives in this step");
  throwError(cat(what,
                 ": the ranks recorded different collectives, and every rank must record the "
                 "same collectives in the same order (a model or a branch that depends on the "
                 "rank?): collective #",
                 first, " of the step differs: ", each, "; ", mine),
             loc);
}

} // namespace sinter::detail
