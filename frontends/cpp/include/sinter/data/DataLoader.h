//===- DataLoader.h - batches of a dataset, shuffled and prefetched -*- C++ -*-===//
//
// As torch.utils.data: a Dataset gives examples of fixed shapes by index; a
// DataLoader groups them into batches in an order shuffled with a seed, on a
// background thread a few batches ahead of the training loop. Every batch
// has the same shape (the last partial batch of an epoch is dropped, or
// padded with a mask saying which rows are real), so a compiled step never
// recompiles for the data. An epoch's order depends only on the seed and the
// epoch's number, so a loader can start at any batch (resuming a job).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_DATA_DATALOADER_H
#define SINTER_DATA_DATALOADER_H

#include "sinter/Tensor.h"
#include "sinter/data/Datasets.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sinter::data {

/// Examples of fixed shapes. Inputs and targets are f32, i32 or i64.
class Dataset {
public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Shape input_shape() const = 0;
  virtual DType input_dtype() const = 0;
  virtual Shape target_shape() const = 0;
  virtual DType target_dtype() const = 0;
  /// Writes example `index`'s input and target (row-major, host values of
  /// their dtypes) at `input` and `target`. Called on the loader's thread.
  virtual void get(int64_t index, void *input, void *target) const = 0;
};

/// Labelled images of one channel (IDX bytes, as (Fashion-)MNIST): inputs
/// [1, H, W] f32 in [0, 1], targets i64 class ids.
std::shared_ptr<Dataset> image_classification(const std::string &images_idx,
                                              const std::string &labels_idx, int64_t classes,
                                              Loc loc = Loc::current());

/// Fashion-MNIST's "train" or "test" split as a Dataset (see load_fashion_mnist).
std::shared_ptr<Dataset> fashion_mnist(const std::string &split,
                                       const std::string &dir = kFashionMnistDir,
                                       Loc loc = Loc::current());

/// A token stream cut into windows of `context` tokens: example i's input is
/// tokens [i * context, (i + 1) * context) (i64 [context]) and its target
/// the same window one token later (next-token prediction).
std::shared_ptr<Dataset> token_windows(std::vector<int32_t> tokens, int64_t context,
                                       Loc loc = Loc::current());

struct LoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = true;
  uint64_t seed = 0;
  /// Drop the last partial batch of an epoch (training); otherwise pad it
  /// by repeating its first example and mark the padding in Batch::mask.
  bool drop_last = true;
  /// Batches prepared ahead on the loader's thread (0: on the caller's).
  int64_t prefetch = 2;
  /// Data parallelism: rank `rank` of `world_size` gets its shard of every
  /// global batch of batch_size * world_size examples (rows [rank *
  /// batch_size, (rank + 1) * batch_size) of it), in the order every rank
  /// shares (the same seed everywhere), so that the ranks together see what
  /// one process with the global batch would. The last partial global batch
  /// is dropped: every rank runs the same number of steps. REQUIRES:
  /// drop_last when world_size > 1.
  int64_t rank = 0;
  int64_t world_size = 1;
};

struct Batch {
  Tensor inputs;                ///< [batch_size, input shape...]
  Tensor targets;               ///< [batch_size, target shape...]
  Tensor mask;                  ///< f32 [batch_size]: 1 for a real example, 0 for padding
  int64_t valid = 0;            ///< Real examples in the batch.
  int64_t epoch = 0, index = 0; ///< Which batch of which epoch this is.
};

class DataLoader {
public:
  DataLoader(std::shared_ptr<const Dataset> dataset, LoaderOptions options,
             Loc loc = Loc::current());
  ~DataLoader();
  DataLoader(const DataLoader &) = delete;
  DataLoader &operator=(const DataLoader &) = delete;

  int64_t batches_per_epoch() const;
  /// Continues from batch `index` of epoch `epoch` (as a job resumes).
  void seek(int64_t epoch, int64_t index);
  /// The next batch; after an epoch's last batch comes the next epoch's first.
  Batch next();
  /// Where next() continues.
  int64_t epoch() const { return epoch_; }
  int64_t index() const { return index_; }
  /// The examples of `epoch` in the order the loader visits them.
  std::vector<int64_t> order(int64_t epoch) const;

private:
  struct Prepared;
  class Worker;
  /// One epoch's order, kept while batches come from it.
  struct Order {
    int64_t epoch = -1;
    std::vector<int64_t> ids;
  };
  Prepared prepare(int64_t epoch, int64_t index, Order &cached) const;
  std::shared_ptr<const Dataset> dataset_;
  LoaderOptions options_;
  int64_t epoch_ = 0, index_ = 0;
  Order order_; // without a worker
  std::unique_ptr<Worker> worker_;
};

} // namespace sinter::data

#endif // SINTER_DATA_DATALOADER_H
