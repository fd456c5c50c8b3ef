//===- fuzz_idx.cpp - IDX datasets, gzip-compressed or not ---------------===//
//
// Any bytes as an IDX file (zlib reads a gzip stream or plain bytes alike):
// read, and as a dataset's images when it holds images, or refused with a
// sinter::Error. The header may claim gigabytes: the reader must not
// allocate them for a short file (libFuzzer's -rss_limit_mb catches it).
//
// Mutated gzip streams rarely stay valid, so an input that starts with 'Z'
// is compressed here first (the mutations reach the IDX reader behind
// zlib), and one that starts with 'T' is compressed and then cut short (a
// truncated download).
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "sinter/sinter.h"

#include <zlib.h>

namespace {

/// `bytes` as a gzip stream.
std::string gzipped(std::string_view bytes) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    std::abort();
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef *>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END)
    std::abort();
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

/// The file the reader is given for one fuzzer input (see the header).
std::string fileFor(std::string_view input) {
  if (input.empty() || (input[0] != 'Z' && input[0] != 'T'))
    return std::string(input);
  std::string compressed = gzipped(input.substr(1));
  if (input[0] == 'T')
    compressed.resize(input.size() % compressed.size());
  return compressed;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace sinter;
  fuzz::InputFile file(fileFor(fuzz::bytesOf(data, size)), "images-idx3-ubyte.gz");
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
