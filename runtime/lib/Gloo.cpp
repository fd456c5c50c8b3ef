//===- Gloo.cpp - collectives of CPU processes through Gloo ---------------===//
//
// Note [The communicator] in sinter/runtime/Communicator.h. Gloo's
// collectives block and throw; they run on the queue's thread
// (QueuedCommunicator) and their exceptions become the Status of the
// collective. Reductions go through reduceInto for every element type
// (Gloo's own functions have no bf16). The deterministic mode gathers every
// rank's values and adds them in rank order on each rank.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/Gloo.h"

#include "QueuedCommunicator.h"

#include "absl/strings/str_cat.h"

#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/broadcast.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/store.h"
#include "gloo/transport/tcp/device.h"

#include <csignal>
#include <cstring>
#include <vector>

namespace sinter::runtime {

namespace {

/// Gloo's rendezvous through the store; Gloo wants exceptions.
class StoreAdapter final : public gloo::rendezvous::Store {
public:
  StoreAdapter(StoreClient &client, std::chrono::milliseconds timeout)
      : client_(client), timeout_(timeout) {}
  void set(const std::string &key, const std::vector<char> &data) override {
    check(client_.set(name(key), std::string_view(data.data(), data.size())));
  }
  std::vector<char> get(const std::string &key) override {
    StatusOr<std::string> value = client_.get(name(key), timeout_);
    check(value.status());
    return std::vector<char>(value->begin(), value->end());
  }
  void wait(const std::vector<std::string> &keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &timeout) override {
    std::vector<std::string> named;
    for (const std::string &key : keys)
      named.push_back(name(key));
    check(client_.wait(named, timeout));
  }

private:
  static std::string name(const std::string &key) { return "gloo/" + key; }
  static void check(const Status &status) {
    if (!status.ok())
      throw std::runtime_error(std::string(status.message()));
  }
  StoreClient &client_;
  std::chrono::milliseconds timeout_;
};

class GlooCommunicator final : public QueuedCommunicator {
public:
  /// `addresses`: each rank's address as Gloo writes it in its messages
  /// ("[10.77.0.2]").
  GlooCommunicator(std::shared_ptr<gloo::rendezvous::Context> context,
                   std::vector<std::string> addresses, Options options)
      : QueuedCommunicator(context->rank, context->size, options), context_(std::move(context)),
        addresses_(std::move(addresses)) {}
  ~GlooCommunicator() override { stop(); }
  std::string_view backend() const override { return "gloo"; }

protected:
  Status runAllReduce(void *data, int64_t count, ElementType type, ReduceOp op) override {
    if (count == 0)
      return absl::OkStatus();
    if (options().deterministic)
      return reduceInRankOrder(data, count, type, op);
    gloo::AllreduceOptions gloo(context_);
    int64_t width = elementBytes(type);
    setElements(gloo, data, count, width);
    gloo.setReduceFunction([type, op](void *out, const void *a, const void *b, size_t n) {
      int64_t elements = static_cast<int64_t>(n);
      if (out == b && out != a) {
        reduceInto(out, a, elements, type, op);
        return;
      }
      if (out != a)
        std::memcpy(out, a, n * static_cast<size_t>(elementBytes(type)));
      reduceInto(out, b, elements, type, op);
    });
    gloo.setTag(nextTag());
    gloo.setTimeout(options().timeout);
    gloo::allreduce(gloo);
    if (op == ReduceOp::Mean)
      divideBy(data, count, type, size());
    return absl::OkStatus();
  }

  Status runBroadcast(void *data, int64_t bytes, int root) override {
    gloo::BroadcastOptions gloo(context_);
    gloo.setOutput(static_cast<uint8_t *>(data), static_cast<size_t>(bytes));
    gloo.setRoot(root);
    gloo.setTag(nextTag());
    gloo.setTimeout(options().timeout);
    gloo::broadcast(gloo);
    return absl::OkStatus();
  }

  Status runAllGather(const void *input, void *output, int64_t bytes) override {
    // Gloo gathers from the output's own slice when input and output
    // overlap; a copy keeps the caller's input untouched either way.
    std::vector<uint8_t> mine(static_cast<const uint8_t *>(input),
                              static_cast<const uint8_t *>(input) + bytes);
    gloo::AllgatherOptions gloo(context_);
    gloo.setInput(mine.data(), mine.size());
    gloo.setOutput(static_cast<uint8_t *>(output), static_cast<size_t>(bytes * size()));
    gloo.setTag(nextTag());
    gloo.setTimeout(options().timeout);
    gloo::allgather(gloo);
    return absl::OkStatus();
  }

  Status runBarrier() override {
    gloo::BarrierOptions gloo(context_);
    gloo.setTag(nextTag());
    gloo.setTimeout(options().timeout);
    gloo::barrier(gloo);
    return absl::OkStatus();
  }

  void interrupt() override { context_->closeConnections(); }

  /// Gloo names a peer by its address and a port of the connection
  /// ("Connection closed by peer [10.77.0.2]:41234"); the message says which
  /// rank that is where one rank has that address.
  std::string describeFailure(const std::string &message) override {
    // Ranks on one machine share an address: then the address is all
    // there is to say.
    int named = -1;
    for (int rank = 0; rank < size(); ++rank) {
      const std::string &address = addresses_[static_cast<size_t>(rank)];
      if (rank == this->rank() || address.empty() || message.find(address) == std::string::npos)
        continue;
      if (named >= 0)
        return message;
      named = rank;
    }
    if (named < 0)
      return message;
    return absl::StrCat(message, ": rank ", named, " (", addresses_[static_cast<size_t>(named)],
                        ")");
  }

private:
  /// Gloo sizes its segments by the element width; the reduction is ours.
  static void setElements(gloo::AllreduceOptions &gloo, void *data, int64_t count, int64_t width) {
    auto elements = static_cast<size_t>(count);
    switch (width) {
    case 1:
      return gloo.setOutput(static_cast<uint8_t *>(data), elements);
    case 2:
      return gloo.setOutput(static_cast<uint16_t *>(data), elements);
    case 4:
      return gloo.setOutput(static_cast<uint32_t *>(data), elements);
    default:
      return gloo.setOutput(static_cast<uint64_t *>(data), elements);
    }
  }

  Status reduceInRankOrder(void *data, int64_t count, ElementType type, ReduceOp op) {
    int64_t bytes = count * elementBytes(type);
    std::vector<uint8_t> all(static_cast<size_t>(bytes * size()));
    SINTER_RETURN_IF_ERROR(runAllGather(data, all.data(), bytes));
    std::memcpy(data, all.data(), static_cast<size_t>(bytes));
    for (int rank = 1; rank < size(); ++rank)
      reduceInto(data, all.data() + bytes * rank, count, type, op);
    if (op == ReduceOp::Mean)
      divideBy(data, count, type, size());
    return absl::OkStatus();
  }

  /// Collectives run one at a time and in the same order on every rank,
  /// so a counter names each the same everywhere.
  uint32_t nextTag() { return tag_++; }

  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::vector<std::string> addresses_;
  uint32_t tag_ = 0;
};

} // namespace

StatusOr<std::unique_ptr<Communicator>> connectGloo(StoreClient &store, int rank, int size,
                                                    const GlooEndpoint &endpoint,
                                                    Communicator::Options options) {
  if (size < 1 || rank < 0 || rank >= size)
    return absl::InvalidArgumentError(absl::StrCat("rank ", rank, " is not in a world of ", size));
  // A peer that closes its connection makes send() raise SIGPIPE, which
  // would end the process without a word; Gloo reports EPIPE instead.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    gloo::transport::tcp::attr attr;
    if (!endpoint.interface.empty())
      attr.iface = endpoint.interface;
    else
      attr.hostname = endpoint.address;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(options.timeout);
    StoreAdapter adapter(store, options.timeout);
    context->connectFullMesh(adapter, device);
    // Each rank's address, to name the rank in Gloo's messages; the device
    // describes itself as "tcp, ..., addr=[10.77.0.2]".
    auto addressOf = [](const std::string &description) {
      size_t at = description.find("addr=");
      return at == std::string::npos ? std::string() : description.substr(at + 5);
    };
    SINTER_RETURN_IF_ERROR(
        store.set(absl::StrCat("gloo-address/", rank), addressOf(device->str())));
    std::vector<std::string> addresses;
    for (int peer = 0; peer < size; ++peer) {
      SINTER_ASSIGN_OR_RETURN(std::string address,
                              store.get(absl::StrCat("gloo-address/", peer), options.timeout));
      addresses.push_back(std::move(address));
    }
    return std::unique_ptr<Communicator>(
        new GlooCommunicator(std::move(context), std::move(addresses), options));
  } catch (const std::exception &error) {
    return absl::UnavailableError(absl::StrCat(
        "rank ", rank, " of ", size, " could not connect to its peers (Gloo over TCP, ",
        endpoint.interface.empty() ? "address " + endpoint.address
                                   : "interface " + endpoint.interface,
        "): ", error.what()));
  }
}

} // namespace sinter::runtime
