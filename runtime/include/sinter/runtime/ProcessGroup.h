//===- ProcessGroup.h - a rank's store and communicator, from its world -*- C++ -*-===//
//
// What a data-parallel process holds for its life: the world it was started
// in (Note [Finding the world] in sinter/runtime/World.h), the rendezvous
// store (hosted here when this rank hosts it), and the communicator (Gloo
// for CPU processes). In libsinter_collectives.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_PROCESSGROUP_H
#define SINTER_RUNTIME_PROCESSGROUP_H

#include "sinter/runtime/Communicator.h"
#include "sinter/runtime/Store.h"
#include "sinter/runtime/World.h"

#include <memory>

namespace sinter::runtime {

struct ProcessGroup {
  World world;
  /// Set when this process hosts the store.
  std::unique_ptr<StoreServer> server;
  /// Null in a world of one.
  std::unique_ptr<StoreClient> store;
  std::unique_ptr<Communicator> communicator;
};

struct ProcessGroupOptions {
  Communicator::Options collectives = {};
  /// SINTER_SOCKET_IFNAME; empty: the address that routes to the master.
  std::string socketInterface = {};
};

/// The options the environment gives (SINTER_COLLECTIVE_TIMEOUT,
/// SINTER_DETERMINISTIC_COLLECTIVES, SINTER_SOCKET_IFNAME).
ProcessGroupOptions processGroupOptionsFromEnvironment();

/// Joins the world: a world of one gets the local communicator; the others
/// host or reach the store, then connect to every rank through Gloo, within
/// options.collectives.timeout. The Status says which rank could not do
/// what.
StatusOr<std::unique_ptr<ProcessGroup>> startProcessGroup(const World &world,
                                                          const ProcessGroupOptions &options);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_PROCESSGROUP_H
