//===- fuzz_idx.cpp - IDX datasets, gzip-compressed or not ---------------===//
//
// Any bytes as an IDX file (zlib reads a gzip stream or plain bytes alike):
// read, and as a dataset's images when it holds images, or refused with a
// sinter::Error. The header may claim gigabytes: the reader must not
// allocate them for a short file (libFuzzer's -rss_limit_mb catches it).
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "sinter/sinter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace sinter;
  fuzz::InputFile file(fuzz::bytesOf(data, size), "images-idx3-ubyte.gz");
  try {
    data::IdxArray array = data::read_idx(file.path());
    if (array.shape.size() != 3 || array.shape[0] > (1 << 20))
      return 0;
    // As images, with labels 0, 1, ... modulo 10 (an IDX file of their own).
    int64_t n = array.shape[0];
    std::string labels = {0, 0, 8, 1, char(n >> 24), char(n >> 16), char(n >> 8), char(n)};
    for (int64_t i = 0; i < n; ++i)
      labels += char(i % 10);
    fuzz::InputFile labelsFile(labels, "labels-idx1-ubyte");
    std::shared_ptr<data::Dataset> dataset =
        data::image_classification(file.path(), labelsFile.path(), 10);
    if (dataset->size() != n)
      std::abort();
  } catch (const Error &) {
  }
  return 0;
}
