//===- Gloo.h - the communicator between CPU processes, over TCP -*- C++ -*-===//
//
// Gloo (Debian's libgloo) moves the bytes of CPU processes' collectives
// over TCP (Note [The communicator] in sinter/runtime/Communicator.h); the
// ranks find each other through the rendezvous store (Note [The rendezvous
// store] in sinter/runtime/Store.h). In its own library,
// libsinter_collectives, so that the runtime an artifact needs does not
// need Gloo.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_GLOO_H
#define SINTER_RUNTIME_GLOO_H

#include "sinter/runtime/Communicator.h"
#include "sinter/runtime/Store.h"

#include <memory>
#include <string>

namespace sinter::runtime {

/// Where this rank listens for its peers: a network interface by name
/// (SINTER_SOCKET_IFNAME), else an address (the one this machine routes
/// to the master from: sockets::localAddressTowards).
struct GlooEndpoint {
  std::string interface = {};
  std::string address = {};
};

/// Connects rank `rank` of `size` to every other through `store` (its keys
/// under "gloo/"), within options.timeout; the Status names what was
/// waited for when a rank does not arrive. SIGPIPE is ignored in the
/// process from then on (a peer that closes its connection is an error
/// Status, not a signal).
StatusOr<std::unique_ptr<Communicator>> connectGloo(StoreClient &store, int rank, int size,
                                                    const GlooEndpoint &endpoint,
                                                    Communicator::Options options);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_GLOO_H
