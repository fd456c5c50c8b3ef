//===- Communicator.h - collectives between the ranks of a job -*- C++ -*-===//
//
// Note [The communicator]
// One interface for the collectives of a data-parallel job, whatever moves
// the bytes: Gloo between CPU processes over TCP (sinter/runtime/Gloo.h),
// NCCL between GPUs, or nothing in a world of one (localCommunicator).
// Every collective is started and returns a ticket at once; wait(ticket)
// gives its Status. Collectives run one after another in the order they
// were started, on the communicator's own thread, so a compiled step can
// start a bucket's all-reduce as soon as its gradients exist and wait for
// it only where the update reads them (the rest of the backward pass runs
// meanwhile). Every rank must start the same collectives in the same order.
//
// Failures never hang and never pass silently. A collective that does not
// complete within the timeout (Options::timeout, 300 s by default) fails;
// so does one whose peer closed its connection. The first failure poisons
// the communicator: it and every collective after it fail with the first
// one's message, which names the collective as its caller described it
// ("all_reduce of bucket 3 (1.2 MiB) at step 57") and what happened
// ("connection to rank 1 (10.77.0.2) closed"). abort() fails what is
// outstanding and poisons the rest.
//
// Deterministic mode (Options::deterministic): a reduction equals adding
// the ranks' values in rank order, r0 + r1 + r2 + ..., on every rank, run
// to run. Without it, Gloo's ring reduces each slice starting at a
// different rank (faster, and still bitwise equal on every rank, but not
// equal to one process that accumulates micro-batches in order).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RUNTIME_COMMUNICATOR_H
#define SINTER_RUNTIME_COMMUNICATOR_H

#include "sinter/runtime/Status.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace sinter::runtime {

/// How an all-reduce combines the ranks' values (PyTorch's ReduceOp; Mean
/// is the sum divided by the world size, floating types only).
enum class ReduceOp : uint8_t { Sum, Mean, Max, Min };
std::string_view reduceOpName(ReduceOp op);
/// "sum", "mean", "max" or "min".
StatusOr<ReduceOp> reduceOpNamed(std::string_view name);

/// The element types a collective reduces; named as the dialect names them.
enum class ElementType : uint8_t { F32, F64, F16, BF16, I32, I64, Bool };
std::string_view elementTypeName(ElementType type);
StatusOr<ElementType> elementTypeNamed(std::string_view name);
int64_t elementBytes(ElementType type);
/// What every communicator refuses before a reduction starts (the world of
/// one too): a Mean of elements that are not floating. Callers that must
/// not poison their communicator with a bad request ask first.
Status checkReduction(ElementType type, ReduceOp op);

class Communicator {
public:
  using Ticket = uint64_t;
  struct Options {
    std::chrono::milliseconds timeout = std::chrono::seconds(300);
    bool deterministic = false;
  };

  /// Forgets the steps checked against it (Note [The collectives as run]),
  /// so that another communicator at its address is checked again.
  virtual ~Communicator();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "gloo", "nccl" or "local".
  virtual std::string_view backend() const = 0;

  /// `what` describes the collective for messages ("all_reduce of bucket
  /// 3 (1.2 MiB) at step 57"). REQUIRES: the memory stays valid and
  /// untouched until the ticket is waited for.
  /// In place: `data` holds this rank's `count` elements, then the result.
  virtual Ticket allReduce(void *data, int64_t count, ElementType type, ReduceOp op,
                           std::string what) = 0;
  /// `bytes` of rank `root`'s `data` into every rank's `data`.
  virtual Ticket broadcast(void *data, int64_t bytes, int root, std::string what) = 0;
  /// Every rank's `bytes` of `input`, in rank order, into `output`
  /// (size() * bytes).
  virtual Ticket allGather(const void *input, void *output, int64_t bytes, std::string what) = 0;
  /// Reduces `input` (size() * count elements) over the ranks and gives
  /// rank r the r-th slice of `count` elements in `output`.
  virtual Ticket reduceScatter(const void *input, void *output, int64_t count, ElementType type,
                               ReduceOp op, std::string what) = 0;
  virtual Ticket barrier(std::string what) = 0;
  /// The collective's Status, once it has completed. A ticket is waited for
  /// once.
  virtual Status wait(Ticket ticket) = 0;
  /// Fails what is outstanding and every later collective with `reason`,
  /// at once. A collective that was running may still write its memory
  /// until its transport gives up (the timeout at most): abort is for a
  /// process about to end, which keeps that memory until then.
  virtual void abort(std::string reason) = 0;
  /// OK, or the first failure (the communicator is poisoned).
  virtual Status health() const = 0;
};

/// The world of one: every collective completes at once (a reduction
/// leaves the values as they are, a gather copies).
std::unique_ptr<Communicator> localCommunicator();

/// Reduces `count` elements of `from` into `into` (into = op(into, from)),
/// as a collective does; Mean adds (the caller divides once at the end).
void reduceInto(void *into, const void *from, int64_t count, ElementType type, ReduceOp op);
/// Divides each of `count` elements by `divisor` (the end of a Mean).
void divideBy(void *data, int64_t count, ElementType type, int divisor);

} // namespace sinter::runtime

#endif // SINTER_RUNTIME_COMMUNICATOR_H
