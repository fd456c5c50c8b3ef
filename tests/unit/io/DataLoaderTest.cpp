//===- DataLoaderTest.cpp - batches, shuffling, padding, resuming ---------===//
#include "Helpers.h"

#include "sinter/sinter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

namespace sinter {
namespace {

using ::testing::ElementsAre;
using testing::errorOf;
using ::testing::HasSubstr;

/// Example i: input [2] = {i, -i} (f32), target i (i64); get() of
/// `failAt` throws.
class Counting final : public data::Dataset {
public:
  explicit Counting(int64_t n, int64_t failAt = -1) : n_(n), failAt_(failAt) {}
  int64_t size() const override { return n_; }
  Shape input_shape() const override { return {2}; }
  DType input_dtype() const override { return DType::f32; }
  Shape target_shape() const override { return {}; }
  DType target_dtype() const override { return DType::i64; }
  void get(int64_t index, void *input, void *target) const override {
    SINTER_CHECK(index != failAt_, Loc::current(), "example " + std::to_string(index) + " is bad");
    static_cast<float *>(input)[0] = static_cast<float>(index);
    static_cast<float *>(input)[1] = -static_cast<float>(index);
    *static_cast<int64_t *>(target) = index;
  }

private:
  int64_t n_, failAt_;
};

std::vector<int64_t> targets(const data::Batch &batch) {
  return batch.targets.to_vector<int64_t>();
}

TEST(DataLoader, EachEpochVisitsEveryExampleOnceInASeededOrder) {
  auto dataset = std::make_shared<Counting>(10);
  data::DataLoader loader(dataset, {.batch_size = 5, .seed = 7});
  ASSERT_EQ(loader.batches_per_epoch(), 2);
  std::vector<int64_t> epoch0, epoch1;
  for (int k = 0; k < 2; ++k) {
    data::Batch batch = loader.next();
    EXPECT_EQ(batch.inputs.shape(), (Shape{5, 2}));
    EXPECT_EQ(batch.targets.shape(), (Shape{5}));
    EXPECT_EQ(batch.epoch, 0);
    EXPECT_EQ(batch.index, k);
    std::vector<float> in = batch.inputs.to_vector<float>();
    std::vector<int64_t> t = targets(batch);
    for (size_t i = 0; i < t.size(); ++i) { // inputs and targets of the same example
      EXPECT_EQ(in[2 * i], static_cast<float>(t[i]));
      EXPECT_EQ(in[2 * i + 1], -static_cast<float>(t[i]));
    }
    epoch0.insert(epoch0.end(), t.begin(), t.end());
  }
  for (int k = 0; k < 2; ++k) {
    data::Batch batch = loader.next();
    EXPECT_EQ(batch.epoch, 1);
    std::vector<int64_t> t = targets(batch);
    epoch1.insert(epoch1.end(), t.begin(), t.end());
  }
  EXPECT_EQ(std::set<int64_t>(epoch0.begin(), epoch0.end()).size(), 10u);
  EXPECT_EQ(std::set<int64_t>(epoch1.begin(), epoch1.end()).size(), 10u);
  EXPECT_NE(epoch0, epoch1); // reshuffled
  EXPECT_EQ(epoch0, loader.order(0));
  std::vector<int64_t> sorted = epoch0;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(epoch0, sorted);
  // Another seed, another order; the same seed, the same order.
  data::DataLoader same(dataset, {.batch_size = 5, .seed = 7});
  data::DataLoader other(dataset, {.batch_size = 5, .seed = 8});
  EXPECT_EQ(same.order(0), epoch0);
  EXPECT_NE(other.order(0), epoch0);
  data::DataLoader plain(dataset, {.batch_size = 5, .shuffle = false});
  EXPECT_THAT(targets(plain.next()), ElementsAre(0, 1, 2, 3, 4));
}

TEST(DataLoader, DropsOrPadsTheLastPartialBatch) {
  auto dataset = std::make_shared<Counting>(7);
  data::DataLoader dropping(dataset, {.batch_size = 3, .shuffle = false});
  EXPECT_EQ(dropping.batches_per_epoch(), 2);
  dropping.next();
  data::Batch second = dropping.next();
  EXPECT_THAT(targets(second), ElementsAre(3, 4, 5));
  EXPECT_EQ(dropping.next().epoch, 1); // example 6 is dropped

  data::DataLoader padding(dataset, {.batch_size = 3, .shuffle = false, .drop_last = false});
  EXPECT_EQ(padding.batches_per_epoch(), 3);
  padding.next();
  padding.next();
  data::Batch last = padding.next();
  EXPECT_EQ(last.inputs.shape(), (Shape{3, 2})); // the same shape as every batch
  EXPECT_EQ(last.valid, 1);
  EXPECT_THAT(targets(last), ElementsAre(6, 6, 6));
  EXPECT_THAT(last.mask.to_vector<double>(), ElementsAre(1, 0, 0));
}

TEST(DataLoader, SeekingEqualsContinuingWithAndWithoutPrefetch) {
  auto dataset = std::make_shared<Counting>(23);
  data::DataLoader through(dataset, {.batch_size = 4, .seed = 3, .prefetch = 3});
  std::vector<std::vector<int64_t>> expected;
  for (int k = 0; k < 12; ++k) // across two epochs of 5 batches
    expected.push_back(targets(through.next()));
  for (int64_t prefetch : {0, 1, 4}) {
    data::DataLoader resumed(dataset, {.batch_size = 4, .seed = 3, .prefetch = prefetch});
    resumed.seek(1, 2); // batch 7 of the run
    EXPECT_EQ(resumed.epoch(), 1);
    EXPECT_EQ(resumed.index(), 2);
    for (int k = 7; k < 12; ++k)
      EXPECT_EQ(targets(resumed.next()), expected[k]) << "batch " << k << ", prefetch " << prefetch;
  }
}

TEST(DataLoader, RanksShareEachGlobalBatchAndTogetherSeeWhatOneProcessSees) {
  // 23 examples, 3 ranks of 2: global batches of 6, three an epoch (5
  // examples dropped, on every rank alike).
  auto dataset = std::make_shared<Counting>(23);
  data::DataLoader whole(dataset, {.batch_size = 6, .seed = 3, .prefetch = 0});
  std::vector<std::unique_ptr<data::DataLoader>> ranks;
  for (int64_t rank = 0; rank < 3; ++rank)
    ranks.push_back(std::make_unique<data::DataLoader>(
        dataset, data::LoaderOptions{.batch_size = 2, .seed = 3, .rank = rank, .world_size = 3}));
  for (auto &rank : ranks)
    EXPECT_EQ(rank->batches_per_epoch(), 3);
  for (int step = 0; step < 7; ++step) { // over two epoch boundaries
    std::vector<int64_t> global = targets(whole.next()), joined;
    for (auto &rank : ranks) {
      data::Batch shard = rank->next();
      EXPECT_EQ(shard.inputs.shape(), (Shape{2, 2}));
      EXPECT_EQ(shard.valid, 2);
      std::vector<int64_t> t = targets(shard);
      joined.insert(joined.end(), t.begin(), t.end());
    }
    EXPECT_EQ(joined, global) << "step " << step;
  }
  EXPECT_THAT(
      errorOf([&] { data::DataLoader(dataset, {.batch_size = 2, .rank = 3, .world_size = 3}); }),
      HasSubstr("DataLoader: rank 3 is not in a world of 3"));
  EXPECT_THAT(errorOf([&] {
                data::DataLoader(dataset, {.batch_size = 2, .drop_last = false, .world_size = 2});
              }),
              HasSubstr("a shard of a global batch needs drop_last"));
  EXPECT_THAT(errorOf([&] { data::DataLoader(dataset, {.batch_size = 4, .world_size = 6}); }),
              HasSubstr("the dataset's 23 examples make no batch of 24"));
}

TEST(DataLoader, BadInputIsANamedError) {
  auto dataset = std::make_shared<Counting>(5);
  EXPECT_THAT(errorOf([&] { data::DataLoader(dataset, {.batch_size = 0}); }),
              HasSubstr("batch_size must be positive, got 0"));
  EXPECT_THAT(errorOf([&] { data::DataLoader(dataset, {.batch_size = 6}); }),
              HasSubstr("the dataset's 5 examples make no batch of 6 (the last partial batch is "
                        "dropped)"));
  EXPECT_THAT(errorOf([&] { data::DataLoader(nullptr, {.batch_size = 1}); }),
              HasSubstr("DataLoader: no dataset"));
  data::DataLoader loader(dataset, {.batch_size = 2});
  EXPECT_THAT(errorOf([&] { loader.seek(0, 2); }),
              HasSubstr("batch 2 of epoch 0 does not exist (2 batches an epoch)"));
  // An example that cannot be read fails the batch it is in, on the caller's
  // thread, with the dataset's message.
  data::DataLoader failing(std::make_shared<Counting>(6, 3),
                           {.batch_size = 2, .shuffle = false, .prefetch = 2});
  failing.next();
  EXPECT_THAT(errorOf([&] { failing.next(); }), HasSubstr("example 3 is bad"));
}

TEST(DataLoader, TokenWindowsPredictTheNextToken) {
  auto windows = data::token_windows({10, 11, 12, 13, 14, 15, 16, 17}, 3);
  EXPECT_EQ(windows->size(), 2); // (8 - 1) / 3
  data::DataLoader loader(windows, {.batch_size = 2, .shuffle = false});
  data::Batch batch = loader.next();
  EXPECT_EQ(batch.inputs.shape(), (Shape{2, 3}));
  EXPECT_THAT(batch.inputs.to_vector<int64_t>(), ElementsAre(10, 11, 12, 13, 14, 15));
  EXPECT_THAT(batch.targets.to_vector<int64_t>(), ElementsAre(11, 12, 13, 14, 15, 16));
  EXPECT_THROW(data::token_windows({1, 2, 3}, 3), Error);
}

TEST(DataLoader, FashionMnistAsADataset) {
  auto train = data::fashion_mnist("train");
  EXPECT_EQ(train->size(), 60000);
  EXPECT_EQ(train->input_shape(), (Shape{1, 28, 28}));
  // The same pixels and labels as load_fashion_mnist's tensors.
  data::ImageDataset tensors = data::load_fashion_mnist("test");
  data::DataLoader loader(data::fashion_mnist("test"),
                          {.batch_size = 3, .shuffle = false, .prefetch = 0});
  data::Batch batch = loader.next();
  Tensor expected = tensors.images.slice(0, 0, 3);
  EXPECT_EQ(batch.inputs.to_vector<float>(), expected.to_vector<float>());
  EXPECT_EQ(batch.targets.to_vector<int64_t>(), tensors.labels.slice(0, 0, 3).to_vector<int64_t>());
  EXPECT_THROW(data::fashion_mnist("validation"), Error);
}

TEST(DataLoader, IdxFilesThatAreNotWhatTheyClaimAreNamedErrors) {
  auto idx = [](std::initializer_list<uint32_t> dims, const std::string &data) {
    std::string bytes = {0, 0, 8, static_cast<char>(dims.size())};
    for (uint32_t d : dims)
      for (int shift = 24; shift >= 0; shift -= 8)
        bytes += static_cast<char>(d >> shift);
    std::string path = testing::scratch("idx", "file" + std::to_string(dims.size()) + "-" +
                                                   std::to_string(data.size()));
    std::ofstream(path, std::ios::binary) << bytes << data;
    return path;
  };
  // Dimensions whose product overflows 64 bits (found by fuzz_idx), and a
  // header that promises 12 GiB in a 30-byte file: refused, nothing allocated.
  EXPECT_THAT(errorOf([&] {
                data::read_idx(idx({1u << 31, 1u << 31, 1u << 31}, ""));
              }),
              HasSubstr("has implausible dimensions [2147483648, 2147483648, 2147483648]"));
  EXPECT_THAT(errorOf([&] {
                data::read_idx(idx({65536, 65536, 3}, "0123456789"));
              }),
              HasSubstr("is truncated or corrupt (its header promises [65536, 65536, 3], "
                        "12884901888 bytes of data; it holds 10)"));
  EXPECT_THAT(errorOf([&] {
                data::read_idx(idx({2, 0}, ""));
              }),
              HasSubstr("has implausible dimensions [2, 0]"));
  data::IdxArray small = data::read_idx(idx({2, 3}, "abcdef"));
  EXPECT_EQ(small.shape, (Shape{2, 3}));
  EXPECT_EQ(std::string(small.bytes.begin(), small.bytes.end()), "abcdef");
}

} // namespace
} // namespace sinter
