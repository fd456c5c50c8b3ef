//===- Datasets.cpp - reading datasets into tensors -----------------------===//
//
// IDX files are read through zlib's gz* functions, which read plain and
// gzip-compressed files alike.
//
//===----------------------------------------------------------------------===//
#include "sinter/data/Datasets.h"

#include "../Format.h"
#include "sinter/Error.h"
#include "sinter/data/DataLoader.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <memory>

namespace sinter::data {
namespace {

struct GzCloser {
  void operator()(gzFile file) const { gzclose(file); }
};

} // namespace

IdxArray read_idx(const std::string &path, Loc loc) {
  SINTER_CHECK(std::filesystem::exists(path), loc, cat("read_idx: no such file: ", path));
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  SINTER_CHECK(file != nullptr, loc, cat("read_idx: cannot open ", path));
  auto readExactly = [&](void *into, size_t bytes, const char *what) {
    int got = gzread(file.get(), into, static_cast<unsigned>(bytes));
    SINTER_CHECK(got == static_cast<int>(bytes), loc,
                 cat("read_idx: ", path, " is truncated or corrupt (reading the ", what, ")"));
  };
  uint8_t magic[4];
  readExactly(magic, 4, "header");
  SINTER_CHECK(magic[0] == 0 && magic[1] == 0 && magic[2] == 0x08 && magic[3] >= 1 && magic[3] <= 4,
               loc,
               cat("read_idx: ", path, " is not an IDX file of unsigned bytes (magic ",
                   int(magic[0]), " ", int(magic[1]), " ", int(magic[2]), " ", int(magic[3]), ")"));
  IdxArray array;
  int64_t count = 1;
  for (int d = 0; d < magic[3]; ++d) {
    uint8_t size[4];
    readExactly(size, 4, "dimensions");
    int64_t extent = (int64_t(size[0]) << 24) | (int64_t(size[1]) << 16) | (int64_t(size[2]) << 8) |
                     int64_t(size[3]);
    array.shape.push_back(extent);
    // 0: implausible (an empty dimension, or 16 GiB and more in all).
    count = extent == 0 || count > ((int64_t(1) << 34) - 1) / extent ? 0 : count * extent;
  }
  SINTER_CHECK(count > 0 && count < (int64_t(1) << 34), loc,
               cat("read_idx: ", path, " has implausible dimensions ", toString(array.shape)));
  // In chunks of at most 64 MiB (gzread counts in an int), the buffer
  // growing as they arrive: a header that claims more than the file holds
  // costs no more memory than the file.
  for (int64_t done = 0; done < count;) {
    size_t chunk = static_cast<size_t>(std::min<int64_t>(count - done, int64_t(1) << 26));
    array.bytes.resize(static_cast<size_t>(done) + chunk);
    int got = gzread(file.get(), array.bytes.data() + done, static_cast<unsigned>(chunk));
    SINTER_CHECK(got == static_cast<int>(chunk), loc,
                 cat("read_idx: ", path, " is truncated or corrupt (its header promises ",
                     toString(array.shape), ", ", count, " bytes of data; it holds ",
                     done + std::max(got, 0), ")"));
    done += got;
  }
  return array;
}

namespace {

/// The images and labels files of a Fashion-MNIST split in `dir`, checked to
/// exist; `who` names the caller in messages.
std::pair<std::string, std::string>
fashionMnistFiles(const std::string &split, const std::string &dir, const char *who, Loc loc) {
  SINTER_CHECK(split == "train" || split == "test", loc,
               cat(who, ": split must be \"train\" or \"test\", got \"", split, "\""));
  std::string prefix = dir + "/" + (split == "train" ? "train" : "t10k");
  std::string imagesPath = prefix + "-images-idx3-ubyte.gz";
  SINTER_CHECK(std::filesystem::exists(imagesPath), loc,
               cat(who, ": ", imagesPath,
                   " not found; install Debian's dataset-fashion-mnist package "
                   "(sudo apt-get install dataset-fashion-mnist) or pass its directory"));
  return {imagesPath, prefix + "-labels-idx1-ubyte.gz"};
}

} // namespace

std::shared_ptr<Dataset> fashion_mnist(const std::string &split, const std::string &dir, Loc loc) {
  auto [images, labels] = fashionMnistFiles(split, dir, "fashion_mnist", loc);
  std::shared_ptr<Dataset> dataset = image_classification(images, labels, 10, loc);
  SINTER_CHECK(dataset->input_shape() == Shape({1, 28, 28}), loc,
               cat("fashion_mnist: ", images, " holds images of ", dataset->input_shape()[1], "x",
                   dataset->input_shape()[2], " pixels; Fashion-MNIST's are 28x28"));
  return dataset;
}

ImageDataset load_fashion_mnist(const std::string &split, const std::string &dir, Loc loc) {
  auto [imagesPath, labelsPath] = fashionMnistFiles(split, dir, "load_fashion_mnist", loc);
  IdxArray images = read_idx(imagesPath, loc);
  IdxArray labels = read_idx(labelsPath, loc);
  SINTER_CHECK(images.shape.size() == 3 && images.shape[1] == 28 && images.shape[2] == 28 &&
                   labels.shape.size() == 1 && labels.shape[0] == images.shape[0],
               loc,
               cat("load_fashion_mnist: unexpected shapes ", toString(images.shape), " and ",
                   toString(labels.shape), " in ", dir));
  std::vector<float> pixels(images.bytes.begin(), images.bytes.end());
  for (float &p : pixels)
    p /= 255.0f;
  std::vector<int64_t> classes(labels.bytes.begin(), labels.bytes.end());
  for (int64_t c : classes)
    SINTER_CHECK(c < 10, loc, cat("load_fashion_mnist: label ", c, " out of range in ", dir));
  int64_t n = images.shape[0];
  return {from_vector(pixels, {n, 1, 28, 28}, std::nullopt, loc),
          from_vector(classes, {n}, std::nullopt, loc)};
}

const std::vector<std::string> &fashion_mnist_classes() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                 "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                 "Bag",         "Ankle boot"};
  return names;
}

} // namespace sinter::data
