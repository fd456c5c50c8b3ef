//===- Datasets.h - reading datasets into tensors -------------------------===//
#ifndef SINTER_DATA_DATASETS_H
#define SINTER_DATA_DATASETS_H

#include "sinter/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinter::data {

/// An array in the IDX format of (Fashion-)MNIST: its dimensions and bytes.
struct IdxArray {
  Shape shape;
  std::vector<uint8_t> bytes;
};

/// Reads an IDX file of unsigned bytes (gzip-compressed when the name ends in
/// ".gz"). Throws sinter::Error naming the file and what is wrong with it.
IdxArray read_idx(const std::string &path, Loc loc = Loc::current());

/// Where Debian's dataset-fashion-mnist package installs the data.
inline constexpr const char *kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// A labelled image set: images [N, 1, 28, 28] f32 scaled to [0, 1], labels
/// [N] i64 (class ids 0..9).
struct ImageDataset {
  Tensor images;
  Tensor labels;
  int64_t size() const { return labels.numel(); }
};

/// Fashion-MNIST's "train" (60000) or "test" (10000) split.
ImageDataset load_fashion_mnist(const std::string &split, const std::string &dir = kFashionMnistDir,
                                Loc loc = Loc::current());

/// The class names of Fashion-MNIST, by label.
const std::vector<std::string> &fashion_mnist_classes();

} // namespace sinter::data

#endif // SINTER_DATA_DATASETS_H
