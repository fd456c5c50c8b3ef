//===- Sockets.cpp - TCP sockets with deadlines ---------------------------===//
#include "Sockets.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sinter::runtime::sockets {

namespace {

using Clock = std::chrono::steady_clock;

std::string systemError() { return std::strerror(errno); }

struct AddressList {
  addrinfo *first = nullptr;
  ~AddressList() {
    if (first != nullptr)
      ::freeaddrinfo(first);
  }
};

Status resolve(const std::string &host, int port, int socketType, bool passive, AddressList &list) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = socketType;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  std::string service = std::to_string(port);
  int code =
      ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &list.first);
  if (code != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot resolve host '", host, "': ", ::gai_strerror(code)));
  return absl::OkStatus();
}

std::string addressText(const sockaddr *address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(address)->sin_addr, text,
                sizeof text);
  else if (address->sa_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 *>(address)->sin6_addr, text,
                sizeof text);
  return text;
}

} // namespace

StatusOr<Listener> listen(const std::string &host, int port) {
  AddressList list;
  SINTER_RETURN_IF_ERROR(resolve(host, port, SOCK_STREAM, true, list));
  std::string lastError = "no address";
  for (addrinfo *address = list.first; address != nullptr; address = address->ai_next) {
    int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      lastError = systemError();
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, address->ai_addr, address->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      lastError = systemError();
      ::close(fd);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &length);
    int boundPort = bound.ss_family == AF_INET
                        ? ntohs(reinterpret_cast<sockaddr_in *>(&bound)->sin_port)
                        : ntohs(reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port);
    return Listener{fd, boundPort};
  }
  return absl::UnavailableError(
      absl::StrCat("cannot listen on ", host, ":", port, ": ", lastError));
}

StatusOr<int> connect(const std::string &host, int port, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::string lastError;
  while (true) {
    AddressList list;
    Status resolved = resolve(host, port, SOCK_STREAM, false, list);
    if (resolved.ok()) {
      for (addrinfo *address = list.first; address != nullptr; address = address->ai_next) {
        int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0) {
          lastError = systemError();
          continue;
        }
        if (::connect(fd, address->ai_addr, address->ai_addrlen) == 0) {
          noDelay(fd);
          return fd;
        }
        lastError = systemError();
        ::close(fd);
      }
    } else {
      lastError = std::string(resolved.message());
    }
    if (Clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::DeadlineExceededError(absl::StrCat("cannot connect to ", host, ":", port, " within ",
                                                  timeout.count() / 1000.0, " s: ", lastError));
}

void noDelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

StatusOr<uint32_t> frameLength(std::string_view header, uint32_t maxBytes) {
  if (header.size() < kFrameHeaderBytes)
    return absl::InvalidArgumentError(absl::StrCat("a frame header of ", header.size(), " bytes (",
                                                   kFrameHeaderBytes, " expected)"));
  uint32_t length = 0;
  for (size_t i = 0; i < kFrameHeaderBytes; ++i)
    length |= static_cast<uint32_t>(static_cast<uint8_t>(header[i])) << (8 * i);
  if (length > maxBytes)
    return absl::InvalidArgumentError(
        absl::StrCat("a frame of ", length, " bytes is over the limit of ", maxBytes));
  return length;
}

Status sendFrame(int fd, std::string_view payload) {
  std::string frame;
  frame.reserve(kFrameHeaderBytes + payload.size());
  uint32_t length = static_cast<uint32_t>(payload.size());
  for (size_t i = 0; i < kFrameHeaderBytes; ++i)
    frame.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  frame.append(payload);
  size_t sent = 0;
  while (sent < frame.size()) {
    ssize_t wrote = ::send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (wrote < 0) {
      if (errno == EINTR)
        continue;
      return absl::UnavailableError(absl::StrCat("send: ", systemError()));
    }
    sent += static_cast<size_t>(wrote);
  }
  return absl::OkStatus();
}

namespace {

Status receiveExactly(int fd, char *data, size_t size, Clock::time_point deadline,
                      std::chrono::milliseconds timeout) {
  size_t got = 0;
  while (got < size) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      return absl::DeadlineExceededError(
          absl::StrCat("no answer within ", timeout.count() / 1000.0, " s"));
    pollfd one{fd, POLLIN, 0};
    int ready = ::poll(&one, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (ready < 0 && errno != EINTR)
      return absl::UnavailableError(absl::StrCat("poll: ", systemError()));
    if (ready <= 0)
      continue;
    ssize_t read = ::recv(fd, data + got, size - got, 0);
    if (read == 0)
      return absl::UnavailableError("the connection was closed by the other side");
    if (read < 0) {
      if (errno == EINTR || errno == EAGAIN)
        continue;
      return absl::UnavailableError(absl::StrCat("recv: ", systemError()));
    }
    got += static_cast<size_t>(read);
  }
  return absl::OkStatus();
}

} // namespace

StatusOr<std::string> receiveFrame(int fd, std::chrono::milliseconds timeout, uint32_t maxBytes) {
  auto deadline = Clock::now() + timeout;
  char header[kFrameHeaderBytes];
  SINTER_RETURN_IF_ERROR(receiveExactly(fd, header, kFrameHeaderBytes, deadline, timeout));
  SINTER_ASSIGN_OR_RETURN(uint32_t length,
                          frameLength(std::string_view(header, kFrameHeaderBytes), maxBytes));
  std::string payload(length, '\0');
  SINTER_RETURN_IF_ERROR(receiveExactly(fd, payload.data(), length, deadline, timeout));
  return payload;
}

StatusOr<std::string> localAddressTowards(const std::string &host) {
  AddressList list;
  SINTER_RETURN_IF_ERROR(resolve(host, 9, SOCK_DGRAM, false, list));
  for (addrinfo *address = list.first; address != nullptr; address = address->ai_next) {
    int fd = ::socket(address->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      continue;
    // A datagram socket's connect only picks the route.
    if (::connect(fd, address->ai_addr, address->ai_addrlen) == 0) {
      sockaddr_storage local{};
      socklen_t length = sizeof local;
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&local), &length);
      ::close(fd);
      return addressText(reinterpret_cast<sockaddr *>(&local));
    }
    ::close(fd);
  }
  return absl::UnavailableError(absl::StrCat("no route to ", host));
}

} // namespace sinter::runtime::sockets
