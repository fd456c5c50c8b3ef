//===- ProcessGroup.cpp - a rank's store and communicator -----------------===//
#include "sinter/runtime/ProcessGroup.h"

#include "Sockets.h"

#include "sinter/runtime/Environment.h"
#include "sinter/runtime/Gloo.h"

#include "absl/strings/str_cat.h"

namespace sinter::runtime {

ProcessGroupOptions processGroupOptionsFromEnvironment() {
  const Environment &env = environment();
  return {.collectives = {.timeout = std::chrono::milliseconds(
                              static_cast<int64_t>(env.collective_timeout_s * 1000)),
                          .deterministic = env.deterministic_collectives},
          .socketInterface = env.socket_ifname};
}

StatusOr<std::unique_ptr<ProcessGroup>> startProcessGroup(const World &world,
                                                          const ProcessGroupOptions &options) {
  auto group = std::make_unique<ProcessGroup>();
  group->world = world;
  if (world.size == 1) {
    group->communicator = localCommunicator();
    return group;
  }
  auto failed = [&](const Status &status) {
    return Status(status.code(),
                  absl::StrCat("rank ", world.rank, " of ", world.size, " (", world.launcher,
                               "): ", std::string(status.message())));
  };
  if (world.hostsStore) {
    StatusOr<std::unique_ptr<StoreServer>> server = StoreServer::start("0.0.0.0", world.storePort);
    if (!server.ok())
      return failed(server.status());
    group->server = std::move(*server);
  }
  StoreClient::Options storeOptions{.prefix = absl::StrCat(world.runId, "/", world.restart, "/"),
                                    .name = absl::StrCat("rank ", world.rank),
                                    .timeout = options.collectives.timeout};
  StatusOr<std::unique_ptr<StoreClient>> store =
      StoreClient::connect(world.masterAddress, world.storePort, storeOptions);
  if (!store.ok())
    return failed(store.status());
  group->store = std::move(*store);
  GlooEndpoint endpoint{.interface = options.socketInterface};
  if (endpoint.interface.empty()) {
    StatusOr<std::string> address = sockets::localAddressTowards(world.masterAddress);
    if (!address.ok())
      return failed(address.status());
    endpoint.address = *address;
  }
  StatusOr<std::unique_ptr<Communicator>> communicator =
      connectGloo(*group->store, world.rank, world.size, endpoint, options.collectives);
  if (!communicator.ok())
    return communicator.status();
  group->communicator = std::move(*communicator);
  return group;
}

} // namespace sinter::runtime
