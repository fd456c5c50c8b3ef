//===- Store.cpp - the rendezvous store: server, client, protocol ---------===//
//
// Note [The rendezvous store] in sinter/runtime/Store.h.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Store.h"

#include "Sockets.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sinter::runtime {

namespace {

using Clock = std::chrono::steady_clock;

void putU32(std::string &out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void putString(std::string &out, std::string_view text) {
  putU32(out, static_cast<uint32_t>(text.size()));
  out.append(text);
}

/// Reads the fields of a payload in order; the first shortfall is kept.
struct Reader {
  std::string_view bytes;
  std::string error = {};

  bool take(size_t count, std::string_view what) {
    if (!error.empty())
      return false;
    if (bytes.size() < count) {
      error =
          absl::StrCat(std::string(what), " needs ", count, " bytes but ", bytes.size(), " remain");
      return false;
    }
    return true;
  }
  uint64_t fixed(int width, std::string_view what) {
    if (!take(static_cast<size_t>(width), what))
      return 0;
    uint64_t value = 0;
    for (int i = 0; i < width; ++i)
      value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
    bytes.remove_prefix(static_cast<size_t>(width));
    return value;
  }
  std::string text(std::string_view what) {
    uint64_t size = fixed(4, what);
    if (!take(size, what))
      return {};
    std::string value(bytes.substr(0, size));
    bytes.remove_prefix(size);
    return value;
  }
};

bool isKnownOp(uint8_t op) {
  using Op = StoreMessage::Op;
  return (op >= static_cast<uint8_t>(Op::Hello) && op <= static_cast<uint8_t>(Op::Wait)) ||
         (op >= static_cast<uint8_t>(Op::Ok) && op <= static_cast<uint8_t>(Op::Error));
}

std::string seconds(std::chrono::milliseconds time) {
  return absl::StrCat(static_cast<double>(time.count()) / 1000.0, " s");
}

} // namespace

std::string encodeStoreMessage(const StoreMessage &message) {
  std::string out;
  out.push_back(static_cast<char>(message.op));
  putU32(out, static_cast<uint32_t>(message.keys.size()));
  for (const std::string &key : message.keys)
    putString(out, key);
  putString(out, message.value);
  uint64_t number = static_cast<uint64_t>(message.number);
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((number >> (8 * i)) & 0xff));
  return out;
}

StatusOr<StoreMessage> decodeStoreMessage(std::string_view payload) {
  Reader reader{payload};
  StoreMessage message;
  uint8_t op = static_cast<uint8_t>(reader.fixed(1, "the op"));
  if (reader.error.empty() && !isKnownOp(op))
    return absl::InvalidArgumentError(absl::StrCat("store message: unknown op ", int(op)));
  message.op = static_cast<StoreMessage::Op>(op);
  uint64_t keys = reader.fixed(4, "the key count");
  // Each key takes at least its 4-byte length: a count past that is a lie.
  if (reader.error.empty() && keys > reader.bytes.size() / 4)
    return absl::InvalidArgumentError(
        absl::StrCat("store message: ", keys, " keys in ", reader.bytes.size(), " bytes"));
  for (uint64_t i = 0; i < keys && reader.error.empty(); ++i)
    message.keys.push_back(reader.text("a key"));
  message.value = reader.text("the value");
  message.number = static_cast<int64_t>(reader.fixed(8, "the number"));
  if (!reader.error.empty())
    return absl::InvalidArgumentError(absl::StrCat("store message: ", reader.error));
  if (!reader.bytes.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("store message: ", reader.bytes.size(), " bytes after the message"));
  return message;
}

//===----------------------------------------------------------------------===//
// The server
//===----------------------------------------------------------------------===//

struct StoreServer::State {
  struct Client {
    int fd = -1;
    std::string name = {};
    std::string in = {};
  };
  /// A get or wait held until its keys are set or its deadline passes.
  struct Held {
    int fd = -1;
    StoreMessage request;
    Clock::time_point deadline;
  };

  int listenFd = -1;
  int wakeRead = -1;
  int wakeWrite = -1;
  std::thread thread;
  std::map<std::string, std::string> data;
  std::vector<Client> clients;
  std::vector<Held> held;
  mutable std::mutex mutex; // guards departedNames and clientCount
  std::vector<std::string> departedNames;
  int clientCount = 0;

  void run();
  void accept();
  /// Reads what `client` sent; false when it is gone.
  bool receive(Client &client);
  void answer(Client &client, const StoreMessage &request);
  void reply(int fd, const StoreMessage &message);
  /// Answers the held requests whose keys are all set now, or whose
  /// deadline has passed.
  void serveHeld();
  bool allSet(const std::vector<std::string> &keys) const;
  void drop(size_t index);
};

StatusOr<std::unique_ptr<StoreServer>> StoreServer::start(const std::string &host, int port) {
  SINTER_ASSIGN_OR_RETURN(sockets::Listener listener, sockets::listen(host, port));
  auto server = std::unique_ptr<StoreServer>(new StoreServer());
  server->port_ = listener.port;
  server->state_ = std::make_unique<State>();
  State &state = *server->state_;
  state.listenFd = listener.fd;
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) {
    ::close(listener.fd);
    return absl::InternalError(absl::StrCat("rendezvous store: pipe: ", std::strerror(errno)));
  }
  state.wakeRead = wake[0];
  state.wakeWrite = wake[1];
  state.thread = std::thread([&state] { state.run(); });
  return server;
}

StoreServer::~StoreServer() {
  if (!state_)
    return;
  char byte = 0;
  (void)!::write(state_->wakeWrite, &byte, 1);
  state_->thread.join();
  for (const State::Client &client : state_->clients)
    ::close(client.fd);
  ::close(state_->listenFd);
  ::close(state_->wakeRead);
  ::close(state_->wakeWrite);
}

std::vector<std::string> StoreServer::departed() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->departedNames;
}

int StoreServer::connected() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->clientCount;
}

void StoreServer::State::run() {
  while (true) {
    std::vector<pollfd> fds;
    fds.push_back({wakeRead, POLLIN, 0});
    fds.push_back({listenFd, POLLIN, 0});
    for (const Client &client : clients)
      fds.push_back({client.fd, POLLIN, 0});
    int timeoutMs = -1;
    for (const Held &request : held) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(request.deadline - Clock::now());
      int ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 60'000));
      timeoutMs = timeoutMs < 0 ? ms : std::min(timeoutMs, ms);
    }
    int ready = ::poll(fds.data(), fds.size(), timeoutMs);
    if (ready < 0 && errno != EINTR)
      return;
    if (fds[0].revents != 0)
      return;
    if (fds[1].revents & POLLIN)
      accept();
    // Clients in the order polled; a client dropped shifts the rest, so
    // walk by file descriptor.
    for (size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0)
        continue;
      auto it = std::find_if(clients.begin(), clients.end(),
                             [&](const Client &client) { return client.fd == fds[i].fd; });
      if (it == clients.end())
        continue;
      if (!receive(*it))
        drop(static_cast<size_t>(it - clients.begin()));
    }
    serveHeld();
  }
}

void StoreServer::State::accept() {
  int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0)
    return;
  sockets::noDelay(fd);
  clients.push_back(Client{fd});
  std::lock_guard<std::mutex> lock(mutex);
  ++clientCount;
}

void StoreServer::State::drop(size_t index) {
  Client client = std::move(clients[index]);
  clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(index));
  std::erase_if(held, [&](const Held &request) { return request.fd == client.fd; });
  ::close(client.fd);
  std::lock_guard<std::mutex> lock(mutex);
  --clientCount;
  if (!client.name.empty())
    departedNames.push_back(client.name);
}

bool StoreServer::State::receive(Client &client) {
  char buffer[65536];
  ssize_t got = ::recv(client.fd, buffer, sizeof buffer, 0);
  if (got <= 0)
    return got < 0 && (errno == EINTR || errno == EAGAIN);
  client.in.append(buffer, static_cast<size_t>(got));
  constexpr size_t header = sockets::kFrameHeaderBytes;
  while (client.in.size() >= header) {
    StatusOr<uint32_t> length = sockets::frameLength(client.in, kStoreMaxFrameBytes);
    if (!length.ok()) {
      reply(client.fd,
            {.op = StoreMessage::Op::Error, .value = std::string(length.status().message())});
      return false;
    }
    if (client.in.size() < header + *length)
      break;
    StatusOr<StoreMessage> request =
        decodeStoreMessage(std::string_view(client.in).substr(header, *length));
    client.in.erase(0, header + *length);
    if (!request.ok()) {
      // A peer that speaks something else: say so and stop listening to it.
      reply(client.fd,
            {.op = StoreMessage::Op::Error, .value = std::string(request.status().message())});
      return false;
    }
    answer(client, *request);
  }
  return true;
}

bool StoreServer::State::allSet(const std::vector<std::string> &keys) const {
  return std::all_of(keys.begin(), keys.end(),
                     [&](const std::string &key) { return data.count(key) != 0; });
}

void StoreServer::State::answer(Client &client, const StoreMessage &request) {
  using Op = StoreMessage::Op;
  auto error = [&](std::string text) {
    reply(client.fd, {.op = Op::Error,
                      .value = std::move(text),
                      .number = static_cast<int64_t>(absl::StatusCode::kInvalidArgument)});
  };
  bool oneKey = request.keys.size() == 1;
  switch (request.op) {
  case Op::Hello:
    client.name = request.value;
    reply(client.fd, {.op = Op::Ok});
    return;
  case Op::Set:
    if (!oneKey)
      return error("set takes one key");
    data[request.keys[0]] = request.value;
    reply(client.fd, {.op = Op::Ok});
    return;
  case Op::Add: {
    if (!oneKey)
      return error("add takes one key");
    int64_t value = 0;
    if (auto it = data.find(request.keys[0]); it != data.end()) {
      const std::string &text = it->second;
      auto [end, code] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (code != std::errc() || end != text.data() + text.size())
        return error(absl::StrCat("add: the value of ", request.keys[0], " is not an integer"));
    }
    value += request.number;
    data[request.keys[0]] = std::to_string(value);
    reply(client.fd, {.op = Op::Number, .number = value});
    return;
  }
  case Op::Check:
    reply(client.fd, {.op = Op::Number, .number = allSet(request.keys) ? 1 : 0});
    return;
  case Op::Delete:
    if (!oneKey)
      return error("delete takes one key");
    reply(client.fd, {.op = Op::Number, .number = data.erase(request.keys[0]) != 0 ? 1 : 0});
    return;
  case Op::Get:
  case Op::Wait:
    if (request.op == Op::Get && !oneKey)
      return error("get takes one key");
    held.push_back({client.fd, request, Clock::now() + std::chrono::milliseconds(request.number)});
    return;
  default:
    return error(absl::StrCat("op ", int(request.op), " is not a request"));
  }
}

void StoreServer::State::serveHeld() {
  using Op = StoreMessage::Op;
  auto now = Clock::now();
  std::vector<Held> waiting;
  for (Held &request : held) {
    if (allSet(request.request.keys)) {
      if (request.request.op == Op::Get)
        reply(request.fd, {.op = Op::Value, .value = data[request.request.keys[0]]});
      else
        reply(request.fd, {.op = Op::Ok});
    } else if (now >= request.deadline) {
      std::vector<std::string> missing;
      for (const std::string &key : request.request.keys)
        if (data.count(key) == 0)
          missing.push_back(key);
      reply(request.fd,
            {.op = Op::Error,
             .value = absl::StrCat("timed out after ",
                                   seconds(std::chrono::milliseconds(request.request.number)),
                                   " waiting for ", absl::StrJoin(missing, ", ")),
             .number = static_cast<int64_t>(absl::StatusCode::kDeadlineExceeded)});
    } else {
      waiting.push_back(std::move(request));
    }
  }
  held = std::move(waiting);
}

void StoreServer::State::reply(int fd, const StoreMessage &message) {
  // A client that is gone is found by the poll loop; nothing to do here.
  (void)sockets::sendFrame(fd, encodeStoreMessage(message));
}

//===----------------------------------------------------------------------===//
// The client
//===----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<StoreClient>> StoreClient::connect(const std::string &host, int port,
                                                            Options options) {
  auto client = std::unique_ptr<StoreClient>(new StoreClient());
  client->address_ = absl::StrCat(host, ":", port);
  SINTER_ASSIGN_OR_RETURN(client->fd_, sockets::connect(host, port, options.timeout));
  client->options_ = std::move(options);
  if (!client->options_.name.empty()) {
    SINTER_ASSIGN_OR_RETURN(
        StoreMessage answer,
        client->request({.op = StoreMessage::Op::Hello, .value = client->options_.name}, {}));
    (void)answer;
  }
  return client;
}

StoreClient::~StoreClient() {
  if (fd_ >= 0)
    ::close(fd_);
}

std::string StoreClient::key(std::string_view key) const {
  return absl::StrCat(options_.prefix, std::string(key));
}

StatusOr<StoreMessage> StoreClient::request(StoreMessage message, std::chrono::milliseconds held) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto fail = [&](const std::string &what) {
    return absl::UnavailableError(absl::StrCat("rendezvous store at ", address_, ": ", what));
  };
  if (fd_ < 0)
    return fail("the connection was lost earlier");
  Status sent = sockets::sendFrame(fd_, encodeStoreMessage(message));
  if (!sent.ok()) {
    ::close(fd_);
    fd_ = -1;
    return fail(std::string(sent.message()));
  }
  // The server answers a held request at its deadline; beyond that, a
  // margin for a busy machine.
  auto limit = held + options_.timeout;
  StatusOr<std::string> payload = sockets::receiveFrame(fd_, limit, kStoreMaxFrameBytes);
  if (!payload.ok()) {
    ::close(fd_);
    fd_ = -1;
    return fail(std::string(payload.status().message()));
  }
  StatusOr<StoreMessage> answer = decodeStoreMessage(*payload);
  if (!answer.ok())
    return fail(std::string(answer.status().message()));
  if (answer->op == StoreMessage::Op::Error) {
    auto code = static_cast<absl::StatusCode>(answer->number);
    if (code == absl::StatusCode::kOk)
      code = absl::StatusCode::kInternal;
    return Status(code, absl::StrCat("rendezvous store at ", address_, ": ", answer->value));
  }
  return answer;
}

Status StoreClient::set(std::string_view key, std::string_view value) {
  return request(
             {.op = StoreMessage::Op::Set, .keys = {this->key(key)}, .value = std::string(value)},
             {})
      .status();
}

StatusOr<std::string> StoreClient::get(std::string_view key, std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0)
    timeout = options_.timeout;
  SINTER_ASSIGN_OR_RETURN(
      StoreMessage answer,
      request({.op = StoreMessage::Op::Get, .keys = {this->key(key)}, .number = timeout.count()},
              timeout));
  return std::move(answer.value);
}

StatusOr<int64_t> StoreClient::add(std::string_view key, int64_t delta) {
  SINTER_ASSIGN_OR_RETURN(
      StoreMessage answer,
      request({.op = StoreMessage::Op::Add, .keys = {this->key(key)}, .number = delta}, {}));
  return answer.number;
}

StatusOr<bool> StoreClient::check(const std::vector<std::string> &keys) {
  StoreMessage message{.op = StoreMessage::Op::Check};
  for (const std::string &one : keys)
    message.keys.push_back(key(one));
  SINTER_ASSIGN_OR_RETURN(StoreMessage answer, request(std::move(message), {}));
  return answer.number != 0;
}

StatusOr<bool> StoreClient::remove(std::string_view key) {
  SINTER_ASSIGN_OR_RETURN(StoreMessage answer,
                          request({.op = StoreMessage::Op::Delete, .keys = {this->key(key)}}, {}));
  return answer.number != 0;
}

Status StoreClient::wait(const std::vector<std::string> &keys, std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0)
    timeout = options_.timeout;
  StoreMessage message{.op = StoreMessage::Op::Wait, .number = timeout.count()};
  for (const std::string &one : keys)
    message.keys.push_back(key(one));
  return request(std::move(message), timeout).status();
}

} // namespace sinter::runtime
