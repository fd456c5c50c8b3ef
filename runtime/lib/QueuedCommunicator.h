//===- QueuedCommunicator.h - collectives in order on their own thread -----===//
//
// What every communicator with a transport shares (Note [The communicator]
// in sinter/runtime/Communicator.h): collectives queued in the order they
// are started and run one by one on the communicator's thread, tickets,
// the first failure poisoning the rest, abort, and a watchdog in wait()
// for a transport that does not enforce its own timeout. A backend writes
// the blocking collectives (run*) and how to break one that is blocked
// (interrupt).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_LIB_QUEUEDCOMMUNICATOR_H
#define SINTER_RUNTIME_LIB_QUEUEDCOMMUNICATOR_H

#include "sinter/runtime/Communicator.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace sinter::runtime {

class QueuedCommunicator : public Communicator {
public:
  QueuedCommunicator(int rank, int size, Options options);
  /// REQUIRES: the derived class called stop() in its destructor.
  ~QueuedCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Ticket allReduce(void *data, int64_t count, ElementType type, ReduceOp op,
                   std::string what) override;
  Ticket broadcast(void *data, int64_t bytes, int root, std::string what) override;
  Ticket allGather(const void *input, void *output, int64_t bytes, std::string what) override;
  Ticket reduceScatter(const void *input, void *output, int64_t count, ElementType type,
                       ReduceOp op, std::string what) override;
  Ticket barrier(std::string what) override;
  Status wait(Ticket ticket) override;
  void abort(std::string reason) override;
  Status health() const override;

protected:
  virtual Status runAllReduce(void *data, int64_t count, ElementType type, ReduceOp op) = 0;
  virtual Status runBroadcast(void *data, int64_t bytes, int root) = 0;
  virtual Status runAllGather(const void *input, void *output, int64_t bytes) = 0;
  virtual Status runBarrier() = 0;
  /// Reduce-scatter as all-reduce of a copy, then the rank's slice: a
  /// backend with its own overrides it.
  virtual Status runReduceScatter(const void *input, void *output, int64_t count, ElementType type,
                                  ReduceOp op);
  /// Makes a blocked run* return (closes the transport's connections).
  virtual void interrupt() {}
  /// The transport's error message, with the rank it concerns where the
  /// transport names a peer another way.
  virtual std::string describeFailure(const std::string &message) { return message; }
  /// Stops the thread after failing what is queued.
  void stop();

  const Options &options() const { return options_; }

private:
  Ticket enqueue(std::string what, std::function<Status()> run);
  void serve();

  struct Work {
    Ticket ticket;
    std::string what;
    std::function<Status()> run;
  };
  int rank_;
  int size_;
  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Work> queue_;
  std::map<Ticket, Status> done_;
  Ticket next_ = 1;
  Ticket running_ = 0;
  Status poison_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_LIB_QUEUEDCOMMUNICATOR_H
