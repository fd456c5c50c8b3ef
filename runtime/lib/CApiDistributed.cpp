//===- CApiDistributed.cpp - the C API's process group ---------------------===//
//
// sinter_process_group_* (sinter/runtime/c_api.h): a rank's process group
// from its launcher's environment (Note [Finding the world] in
// sinter/runtime/World.h), for sessions whose step reduces over the ranks
// and for the caller's own reductions (a loss, a metric). In
// libsinter_collectives, beside Gloo; sinter_session_set_process_group is in
// libsinter_runtime (CApi.cpp).
//
//===----------------------------------------------------------------------===//
#include "CApiInternal.h"

#include "sinter/runtime/ProcessGroup.h"
#include "sinter/runtime/World.h"

#include "absl/strings/str_cat.h"

#include <cstdlib>

using namespace sinter::runtime;
using namespace sinter::runtime::c_api;
using sinter::Status;
using sinter::StatusOr;

namespace {

/// The group's world, or -1 with a message for a null group.
int worldNumber(const sinter_process_group *group, const char *call, int World::*field) {
  if (group == nullptr)
    return nullArgument(call, "the process group"), -1;
  return group->group->world.*field;
}

} // namespace

extern "C" {

int sinter_process_group_init(sinter_process_group **out) {
  const char *call = "sinter_process_group_init";
  return guarded(call, [&]() -> int {
    if (out == nullptr)
      return nullArgument(call, "the result pointer");
    *out = nullptr;
    StatusOr<World> world =
        worldFromEnvironment([](const char *name) { return std::getenv(name); });
    if (!world.ok())
      return report(world.status(), call);
    StatusOr<std::unique_ptr<ProcessGroup>> started =
        startProcessGroup(*world, processGroupOptionsFromEnvironment());
    if (!started.ok())
      return report(started.status(), call);
    *out = new (std::nothrow) sinter_process_group{std::move(*started)};
    return *out == nullptr
               ? fail(SINTER_ERROR_RESOURCE_EXHAUSTED, std::string(call) + ": out of memory")
               : SINTER_OK;
  });
}

void sinter_process_group_destroy(sinter_process_group *group) { delete group; }

int sinter_process_group_rank(const sinter_process_group *group) {
  return worldNumber(group, "sinter_process_group_rank", &World::rank);
}

int sinter_process_group_size(const sinter_process_group *group) {
  return worldNumber(group, "sinter_process_group_size", &World::size);
}

int sinter_process_group_local_rank(const sinter_process_group *group) {
  return worldNumber(group, "sinter_process_group_local_rank", &World::localRank);
}

int sinter_process_group_all_reduce(sinter_process_group *group, void *data, int64_t count,
                                    const char *dtype, const char *op) {
  const char *call = "sinter_process_group_all_reduce";
  return guarded(call, [&]() -> int {
    if (group == nullptr)
      return nullArgument(call, "the process group");
    if (dtype == nullptr)
      return nullArgument(call, "the dtype");
    if (op == nullptr)
      return nullArgument(call, "the reduction");
    if (count < 0)
      return fail(SINTER_ERROR_INVALID_ARGUMENT,
                  absl::StrCat(call, ": a count of ", count, " elements"));
    if (data == nullptr && count > 0)
      return nullArgument(call, "the data");
    StatusOr<ElementType> type = elementTypeNamed(dtype);
    if (!type.ok())
      return report(type.status(), call);
    StatusOr<ReduceOp> reduce = reduceOpNamed(op);
    if (!reduce.ok())
      return report(reduce.status(), call);
    // Refused here, not by the communicator, which a refused request would
    // poison for every later collective.
    if (Status refused = checkReduction(*type, *reduce); !refused.ok())
      return report(refused, call);
    Communicator &communicator = *group->group->communicator;
    return report(communicator.wait(communicator.allReduce(
                      data, count, *type, *reduce,
                      absl::StrCat("all_reduce (", op, ") of ", count, " ", dtype, " elements"))),
                  call);
  });
}

int sinter_process_group_barrier(sinter_process_group *group) {
  const char *call = "sinter_process_group_barrier";
  return guarded(call, [&]() -> int {
    if (group == nullptr)
      return nullArgument(call, "the process group");
    Communicator &communicator = *group->group->communicator;
    return report(communicator.wait(communicator.barrier(call)), call);
  });
}

} // extern "C"
