//===- Buckets.h - gradient buckets and their overlap with the step -*- C++ -*-===//
//
// Note [Gradient buckets]
// A data-parallel step all-reduces every gradient (Note [Collectives in the
// step] in sinter/Distributed.h). One collective per gradient pays each
// message's latency once per tensor, and a collective that runs where the
// schedule reaches it keeps the step waiting while it crosses the network.
// As PyTorch's DistributedDataParallel does, the translated Program groups
// the all-reduces into buckets, in the order the schedule produces the
// gradients: the first bucket up to 1 MiB (small, so that communication
// starts early in the backward pass), the others up to 25 MiB (few, large
// messages). A bucket is two launches:
//   - its start (Kind::AllReduce), placed right after the last launch that
//     writes one of its tensors, copies them into one bucket buffer and
//     starts the collective on it without waiting;
//   - its done (Kind::AllReduceDone), placed right before the first launch
//     that reads one of the reduced tensors (else at the end), waits for the
//     collective and copies the bucket out into the reduced tensors.
// Everything the schedule places between them runs while the bucket is on
// the network. The memory plan sees it as it is: the bucket buffer lives
// from the start to the done, the reduced tensors from the done on. At most
// `inFlight` buckets are started and not done (the oldest is waited for
// before another starts), which bounds the bytes in flight; 0 waits for each
// bucket right after its start (no overlap, the same messages).
// A tensor joins the open bucket only when that keeps the bucket's start
// before the first reader of every tensor in it (the schedule is not
// changed: a gradient that the optimizer reads before the next one is
// produced closes the bucket). A bucket holds one reduction of one element
// type. The bytes of each message are the same on every rank, since every
// rank compiles the same step (Note [The same step on every rank] in
// frontends/cpp/lib/Distributed.cpp). The other collectives (a sharded
// optimizer's reduce-scatters and all-gathers: Note [Sharded optimizer
// state] in sinter/optim/Optimizer.h) run where they stand; a bucket never
// spans one, and starts between the same two of them as its all-reduces,
// so that every rank starts its collectives in the order of the schedule.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PASSES_BUCKETS_H
#define SINTER_PASSES_BUCKETS_H

#include "sinter/runtime/Program.h"

#include <cstdint>
#include <vector>

namespace sinter::planner {

struct BucketOptions {
  int64_t firstBucketBytes = int64_t{1} << 20;
  int64_t bucketBytes = int64_t{25} << 20;
  int inFlight = 2;
};

/// The options from SINTER_FIRST_BUCKET_MB, SINTER_BUCKET_MB and
/// SINTER_BUCKETS_IN_FLIGHT (runtime::environment()).
BucketOptions bucketOptionsFromEnvironment();

/// Rewrites `launches` (a Program's launches in order, before fills and
/// copies are placed; each all-reduce as translated: inputs into outputs,
/// one each, results = outputs) into buckets of starts and dones
/// (Note [Gradient buckets]), adding one buffer per bucket to `buffers`.
/// Returns, for each launch now in `launches`, the index it had before, or
/// -1 for a bucket's start or done. A program whose all-reduce reads the
/// result of another keeps each all-reduce as its own bucket, waited for
/// at once.
std::vector<int> bucketCollectives(std::vector<runtime::Program::Step> &launches,
                                   std::vector<runtime::Program::Buffer> &buffers,
                                   const BucketOptions &options);

} // namespace sinter::planner

#endif // SINTER_PASSES_BUCKETS_H
