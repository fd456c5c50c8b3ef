//===- DataLoader.cpp - batches of a dataset, shuffled and prefetched -----===//
#include "sinter/data/DataLoader.h"

#include "../Format.h"
#include "sinter/Error.h"
#include "sinter/data/Datasets.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

namespace sinter::data {
namespace {

class ImageClassification final : public Dataset {
public:
  ImageClassification(IdxArray images, IdxArray labels)
      : images_(std::move(images)), labels_(std::move(labels)) {}
  int64_t size() const override { return images_.shape[0]; }
  Shape input_shape() const override { return {1, images_.shape[1], images_.shape[2]}; }
  DType input_dtype() const override { return DType::f32; }
  Shape target_shape() const override { return {}; }
  DType target_dtype() const override { return DType::i64; }
  void get(int64_t index, void *input, void *target) const override {
    int64_t pixels = images_.shape[1] * images_.shape[2];
    const uint8_t *from = images_.bytes.data() + index * pixels;
    float *to = static_cast<float *>(input);
    for (int64_t k = 0; k < pixels; ++k)
      to[k] = static_cast<float>(from[k]) / 255.0f;
    *static_cast<int64_t *>(target) = labels_.bytes[static_cast<size_t>(index)];
  }

private:
  IdxArray images_, labels_;
};

class TokenWindows final : public Dataset {
public:
  TokenWindows(std::vector<int32_t> tokens, int64_t context)
      : tokens_(std::move(tokens)), context_(context) {}
  int64_t size() const override { return (static_cast<int64_t>(tokens_.size()) - 1) / context_; }
  Shape input_shape() const override { return {context_}; }
  DType input_dtype() const override { return DType::i64; }
  Shape target_shape() const override { return {context_}; }
  DType target_dtype() const override { return DType::i64; }
  void get(int64_t index, void *input, void *target) const override {
    const int32_t *from = tokens_.data() + index * context_;
    for (int64_t k = 0; k < context_; ++k) {
      static_cast<int64_t *>(input)[k] = from[k];
      static_cast<int64_t *>(target)[k] = from[k + 1];
    }
  }

private:
  std::vector<int32_t> tokens_;
  int64_t context_;
};

int64_t exampleBytes(const Shape &shape, DType dtype) { return numel(shape) * elementSize(dtype); }

template <typename T> std::vector<T> asVector(const std::vector<char> &bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty())
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

Tensor toTensor(const std::vector<char> &bytes, Shape shape, DType dtype) {
  switch (dtype) {
  case DType::f32:
    return from_vector(asVector<float>(bytes), shape);
  case DType::i32:
    return from_vector(asVector<int32_t>(bytes), shape);
  default:
    return from_vector(asVector<int64_t>(bytes), shape);
  }
}

} // namespace

std::shared_ptr<Dataset> image_classification(const std::string &images_idx,
                                              const std::string &labels_idx, int64_t classes,
                                              Loc loc) {
  IdxArray images = read_idx(images_idx, loc);
  IdxArray labels = read_idx(labels_idx, loc);
  SINTER_CHECK(
      images.shape.size() == 3 && labels.shape.size() == 1 && labels.shape[0] == images.shape[0],
      loc,
      cat("image_classification: ", images_idx, " holds ", toString(images.shape), " and ",
          labels_idx, " ", toString(labels.shape), "; expected images [N, H, W] and labels [N]"));
  for (size_t i = 0; i < labels.bytes.size(); ++i)
    SINTER_CHECK(labels.bytes[i] < classes, loc,
                 cat("image_classification: label ", int(labels.bytes[i]), " of example ", i,
                     " in ", labels_idx, " is not below the ", classes, " classes"));
  return std::make_shared<ImageClassification>(std::move(images), std::move(labels));
}

std::shared_ptr<Dataset> token_windows(std::vector<int32_t> tokens, int64_t context, Loc loc) {
  SINTER_CHECK(context > 0, loc, cat("token_windows: context must be positive, got ", context));
  SINTER_CHECK(static_cast<int64_t>(tokens.size()) > context, loc,
               cat("token_windows: ", tokens.size(), " tokens do not fill one window of ", context,
                   " tokens and its next token"));
  return std::make_shared<TokenWindows>(std::move(tokens), context);
}

/// A batch's host bytes, made on the worker thread.
struct DataLoader::Prepared {
  std::vector<char> inputs, targets;
  int64_t valid = 0, epoch = 0, index = 0;
  std::exception_ptr error;
};

/// Prepares batches in order from a starting point, `depth` ahead.
class DataLoader::Worker {
public:
  Worker(const DataLoader &loader, int64_t epoch, int64_t index, int64_t depth)
      : loader_(loader), depth_(depth), thread_([this, epoch, index] { run(epoch, index); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  Prepared pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !ready_.empty(); });
    Prepared batch = std::move(ready_.front());
    ready_.pop_front();
    changed_.notify_all();
    return batch;
  }

private:
  void run(int64_t epoch, int64_t index) {
    while (true) {
      Prepared batch;
      try {
        batch = loader_.prepare(epoch, index, order_);
      } catch (...) {
        batch.error = std::current_exception();
      }
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || static_cast<int64_t>(ready_.size()) < depth_; });
      if (stop_)
        return;
      bool failed = batch.error != nullptr;
      ready_.push_back(std::move(batch));
      changed_.notify_all();
      if (failed)
        return;
      if (++index == loader_.batches_per_epoch()) {
        index = 0;
        ++epoch;
      }
    }
  }

  const DataLoader &loader_;
  Order order_;
  int64_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Prepared> ready_;
  bool stop_ = false;
  std::thread thread_; // last: started once the members above exist
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, LoaderOptions options, Loc loc)
    : dataset_(std::move(dataset)), options_(options) {
  SINTER_CHECK(dataset_ != nullptr, loc, "DataLoader: no dataset");
  SINTER_CHECK(options_.batch_size > 0, loc,
               cat("DataLoader: batch_size must be positive, got ", options_.batch_size));
  SINTER_CHECK(options_.prefetch >= 0, loc,
               cat("DataLoader: prefetch must be >= 0, got ", options_.prefetch));
  SINTER_CHECK(
      options_.world_size >= 1 && options_.rank >= 0 && options_.rank < options_.world_size, loc,
      cat("DataLoader: rank ", options_.rank, " is not in a world of ", options_.world_size));
  SINTER_CHECK(options_.world_size == 1 || options_.drop_last, loc,
               "DataLoader: a shard of a global batch needs drop_last (every rank runs the same "
               "number of steps)");
  for (DType dtype : {dataset_->input_dtype(), dataset_->target_dtype()})
    SINTER_CHECK(dtype == DType::f32 || dtype == DType::i32 || dtype == DType::i64, loc,
                 cat("DataLoader: examples must be f32, i32 or i64, got ", name(dtype)));
  SINTER_CHECK(batches_per_epoch() > 0, loc,
               cat("DataLoader: the dataset's ", dataset_->size(), " examples make no batch of ",
                   options_.batch_size * options_.world_size,
                   options_.drop_last ? " (the last partial batch is dropped)" : ""));
  seek(0, 0);
}

DataLoader::~DataLoader() = default;

int64_t DataLoader::batches_per_epoch() const {
  int64_t n = dataset_->size(), b = options_.batch_size * options_.world_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

std::vector<int64_t> DataLoader::order(int64_t epoch) const {
  std::vector<int64_t> ids(static_cast<size_t>(dataset_->size()));
  std::iota(ids.begin(), ids.end(), 0);
  if (!options_.shuffle)
    return ids;
  // Fisher-Yates with the generator's raw output (std::shuffle's use of it
  // differs between standard libraries; this order is the same everywhere).
  std::mt19937_64 random(options_.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch));
  for (size_t i = ids.size(); i > 1; --i)
    std::swap(ids[i - 1], ids[random() % i]);
  return ids;
}

DataLoader::Prepared DataLoader::prepare(int64_t epoch, int64_t index, Order &cached) const {
  if (cached.epoch != epoch) {
    cached.ids = order(epoch);
    cached.epoch = epoch;
  }
  const std::vector<int64_t> &ids = cached.ids;
  // This rank's rows of the global batch.
  int64_t b = options_.batch_size;
  int64_t first = index * b * options_.world_size + options_.rank * b;
  int64_t valid = std::min(b, dataset_->size() - first);
  int64_t inBytes = exampleBytes(dataset_->input_shape(), dataset_->input_dtype());
  int64_t outBytes = exampleBytes(dataset_->target_shape(), dataset_->target_dtype());
  Prepared batch;
  batch.inputs.resize(static_cast<size_t>(b * inBytes));
  batch.targets.resize(static_cast<size_t>(b * outBytes));
  for (int64_t k = 0; k < b; ++k) // padding repeats the batch's first example
    dataset_->get(ids[static_cast<size_t>(first + (k < valid ? k : 0))],
                  batch.inputs.data() + k * inBytes, batch.targets.data() + k * outBytes);
  batch.valid = valid;
  batch.epoch = epoch;
  batch.index = index;
  return batch;
}

void DataLoader::seek(int64_t epoch, int64_t index) {
  SINTER_CHECK(epoch >= 0 && index >= 0 && index < batches_per_epoch(), Loc::current(),
               cat("DataLoader::seek: batch ", index, " of epoch ", epoch, " does not exist (",
                   batches_per_epoch(), " batches an epoch)"));
  worker_.reset();
  epoch_ = epoch;
  index_ = index;
  if (options_.prefetch > 0)
    worker_ = std::make_unique<Worker>(*this, epoch, index, options_.prefetch);
}

Batch DataLoader::next() {
  Prepared prepared = worker_ ? worker_->pop() : prepare(epoch_, index_, order_);
  if (prepared.error)
    std::rethrow_exception(prepared.error);
  if (++index_ == batches_per_epoch()) {
    index_ = 0;
    ++epoch_;
  }
  int64_t b = options_.batch_size;
  Shape inShape{b}, outShape{b};
  for (int64_t d : dataset_->input_shape())
    inShape.push_back(d);
  for (int64_t d : dataset_->target_shape())
    outShape.push_back(d);
  std::vector<float> mask(static_cast<size_t>(b), 0.0f);
  std::fill(mask.begin(), mask.begin() + prepared.valid, 1.0f);
  return {toTensor(prepared.inputs, inShape, dataset_->input_dtype()),
          toTensor(prepared.targets, outShape, dataset_->target_dtype()),
          from_vector(mask, {b}),
          prepared.valid,
          prepared.epoch,
          prepared.index};
}

} // namespace sinter::data
