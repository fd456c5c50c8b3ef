//===- Sockets.h - TCP sockets with deadlines, for the store and the launcher -===//
//
// What the rendezvous store and the launcher need of TCP: listening,
// connecting with retries until a deadline (a server may come up after its
// clients), frames of a 4-byte little-endian length and a payload, and the
// address this machine uses to reach another (Gloo's bind address). Sends
// never raise SIGPIPE (MSG_NOSIGNAL); every wait has a deadline.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_LIB_SOCKETS_H
#define SINTER_RUNTIME_LIB_SOCKETS_H

#include "sinter/runtime/Status.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <fcntl.h>

namespace sinter::runtime::sockets {

struct Listener {
  int fd = -1;
  int port = 0;
};
/// A listening socket on `host` (an address or a name) at `port`, or a free
/// port when 0.
StatusOr<Listener> listen(const std::string &host, int port);

/// A connected socket, trying until `timeout` has passed while the server
/// refuses or cannot be reached.
StatusOr<int> connect(const std::string &host, int port, std::chrono::milliseconds timeout);

void noDelay(int fd);

/// A frame is a 4-byte little-endian payload length, then the payload.
inline constexpr size_t kFrameHeaderBytes = 4;
/// The payload length a frame's header (its first kFrameHeaderBytes) gives,
/// refused when over `maxBytes`.
StatusOr<uint32_t> frameLength(std::string_view header, uint32_t maxBytes);

Status sendFrame(int fd, std::string_view payload);
/// One frame's payload, waiting at most `timeout`; refuses a frame longer
/// than `maxBytes`.
StatusOr<std::string> receiveFrame(int fd, std::chrono::milliseconds timeout, uint32_t maxBytes);

/// The local address the kernel routes to `host` from (no packet is sent).
StatusOr<std::string> localAddressTowards(const std::string &host);

} // namespace sinter::runtime::sockets

#endif // SINTER_RUNTIME_LIB_SOCKETS_H
