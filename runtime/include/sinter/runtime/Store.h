//===- Store.h - the rendezvous store: a small TCP key-value store -*- C++ -*-===//
//
// Note [The rendezvous store]
// The processes of a data-parallel job find each other through one small
// key-value store over TCP, hosted by the node agent of node 0 (sinter-run)
// or, without it, by rank 0. Debian's Gloo has stores on files, in a hash
// map and on Redis only; a job across machines has no shared file, and
// Redis would be one more service to run. What goes through it is small:
// each rank's Gloo address, the NCCL unique id, a graph fingerprint, a
// failure message. So the store is one thread on a poll loop, and the
// protocol is a length-prefixed frame per request and per reply
// (StoreMessage):
//   set KEY VALUE, get KEY (waits), add KEY N (an integer counter),
//   check KEYS (all present?), delete KEY, wait KEYS (waits), hello NAME.
// A waiting get or wait is held on the server with its deadline, so a
// client never polls and a timeout is the server's answer ("timed out after
// 30 s waiting for keys rank/1/address"), not a dead socket. Each client
// keeps one connection for its life: the server knows who is alive (a
// closed connection of a named client is recorded, see
// StoreServer::departed), and a client learns the server is gone at its next
// request. Keys are prefixed by the client (run id and restart generation,
// StoreClient::Options::prefix), so a restarted job never reads the keys
// of the generation before it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_STORE_H
#define SINTER_RUNTIME_STORE_H

#include "sinter/runtime/Status.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sinter::runtime {

/// One request or reply of the store's protocol.
struct StoreMessage {
  enum class Op : uint8_t {
    // Requests.
    Hello = 1,
    Set,
    Get,
    Add,
    Check,
    Delete,
    Wait,
    // Replies.
    Ok = 64,
    Value,
    Number,
    Error,
  };
  Op op = Op::Ok;
  std::vector<std::string> keys = {};
  /// Set: the value; Value: the value read; Error: the reason; Hello: the
  /// client's name.
  std::string value = {};
  /// Add: the increment; Number: the result; Get and Wait: the timeout in
  /// milliseconds.
  int64_t number = 0;
  friend bool operator==(const StoreMessage &, const StoreMessage &) = default;
};

/// The largest frame either side accepts (a value is small: addresses,
/// ids, messages).
inline constexpr uint32_t kStoreMaxFrameBytes = 64u << 20;

/// The payload of one frame (without its 4-byte length).
std::string encodeStoreMessage(const StoreMessage &message);
/// Reads a payload; refuses (InvalidArgument, naming what is wrong) an
/// unknown op, a count or length past the bytes given, trailing bytes.
StatusOr<StoreMessage> decodeStoreMessage(std::string_view payload);

/// The server: a thread that accepts clients and answers them until the
/// object is destroyed.
class StoreServer {
public:
  /// Listens on `host` ("0.0.0.0" for every interface, "127.0.0.1" for
  /// this machine only) at `port`, or a free port when 0.
  static StatusOr<std::unique_ptr<StoreServer>> start(const std::string &host, int port);
  ~StoreServer();
  StoreServer(const StoreServer &) = delete;
  StoreServer &operator=(const StoreServer &) = delete;

  int port() const { return port_; }
  /// The names (from hello) of clients whose connection closed, in order.
  std::vector<std::string> departed() const;
  /// How many clients are connected now.
  int connected() const;

  struct State;

private:
  StoreServer() = default;
  int port_ = 0;
  std::unique_ptr<State> state_;
};

/// A client: one connection, one request at a time (calls from several
/// threads are serialized).
class StoreClient {
public:
  struct Options {
    /// Prepended to every key.
    std::string prefix = {};
    /// Said to the server (StoreServer::departed).
    std::string name = {};
    /// How long connect keeps trying (the server may start after the
    /// client), and the default wait of get and wait.
    std::chrono::milliseconds timeout = std::chrono::seconds(300);
  };
  static StatusOr<std::unique_ptr<StoreClient>> connect(const std::string &host, int port,
                                                        Options options);
  ~StoreClient();
  StoreClient(const StoreClient &) = delete;
  StoreClient &operator=(const StoreClient &) = delete;

  Status set(std::string_view key, std::string_view value);
  /// The value of `key`, waiting up to `timeout` (Options::timeout when
  /// zero) for it to be set; DeadlineExceeded naming the key after that.
  StatusOr<std::string> get(std::string_view key, std::chrono::milliseconds timeout = {});
  /// Adds `delta` to the integer at `key` (0 when absent) and returns it.
  StatusOr<int64_t> add(std::string_view key, int64_t delta);
  /// Whether every key is set, without waiting.
  StatusOr<bool> check(const std::vector<std::string> &keys);
  /// Removes `key`; whether it was there.
  StatusOr<bool> remove(std::string_view key);
  Status wait(const std::vector<std::string> &keys, std::chrono::milliseconds timeout = {});

  const Options &options() const { return options_; }
  /// "host:port", for messages.
  const std::string &address() const { return address_; }

private:
  StoreClient() = default;
  StatusOr<StoreMessage> request(StoreMessage message, std::chrono::milliseconds held);
  std::string key(std::string_view key) const;

  Options options_;
  std::string address_;
  int fd_ = -1;
  std::mutex mutex_;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_STORE_H
