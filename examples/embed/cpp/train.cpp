//===- train.cpp - train a Sinter artifact on Fashion-MNIST, in C++ ------===//
//
//   sinter-compile --model mlp --batch-size 64 --learning-rate 0.002 \
//       --weight-decay 0.0001 --schedule warmup-cosine:50:938:0.0001 -o mlp.sinter
//   ./train mlp.sinter /usr/share/datasets/fashion-mnist mlp.safetensors
//
// The C example (../c/train.c) with the C API held by RAII handles: trains
// one epoch of train_step, reports the test accuracy from predict, saves a
// checkpoint that `sinter-train --model mlp --resume` continues from. Links
// libsinter_runtime alone.
//
//===----------------------------------------------------------------------===//
#include <sinter/runtime/c_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(int code, const std::string &what) {
  if (code != SINTER_OK)
    throw std::runtime_error(what + ": " + sinter_last_error());
}

struct CloseArtifact {
  void operator()(sinter_artifact *a) const { sinter_artifact_close(a); }
};
struct CloseSession {
  void operator()(sinter_session *s) const { sinter_session_close(s); }
};
using Artifact = std::unique_ptr<sinter_artifact, CloseArtifact>;

/// One function of an artifact, with its own state.
class Session {
public:
  Session(sinter_artifact *artifact, const char *function) {
    sinter_session *s = nullptr;
    check(sinter_session_open(artifact, function, &s), std::string("opening ") + function);
    session_.reset(s);
  }
  template <typename T> void set(const char *name, const std::vector<T> &values) {
    check(sinter_session_set_input(session_.get(), name, values.data(), values.size() * sizeof(T)),
          std::string("setting ") + name);
  }
  template <typename T> void get(const char *name, std::vector<T> &into) {
    check(sinter_session_get_output(session_.get(), name, into.data(), into.size() * sizeof(T)),
          std::string("reading ") + name);
  }
  void run() { check(sinter_session_run(session_.get()), "running a step"); }
  int64_t step() const { return sinter_session_step(session_.get()); }
  void takeStateOf(const Session &other) {
    check(sinter_session_copy_state(session_.get(), other.session_.get()), "sharing the state");
  }
  void save(const std::string &path) {
    check(sinter_session_save(session_.get(), path.c_str()), "saving " + path);
  }
  /// The batch size: "input" is f32[batch, 784].
  int64_t batch() const {
    for (int i = 0; i < sinter_session_input_count(session_.get()); ++i) {
      const char *name, *dtype;
      int rank;
      const int64_t *shape;
      check(sinter_session_input(session_.get(), i, &name, &dtype, &rank, &shape, nullptr),
            "reading the inputs");
      if (std::string(name) != "input")
        continue;
      if (std::string(dtype) != "f32" || rank != 2 || shape[1] != 784)
        break;
      return shape[0];
    }
    throw std::runtime_error("the artifact takes no \"input\" of an mlp's f32[batch, 784]");
  }

private:
  std::unique_ptr<sinter_session, CloseSession> session_;
};

/// The items of a gzipped IDX file of bytes (read with gzip -dc).
std::vector<unsigned char> readIdx(const std::string &path, int dims) {
  if (path.find('\'') != std::string::npos)
    throw std::runtime_error("cannot read " + path);
  std::unique_ptr<FILE, int (*)(FILE *)> in(popen(("gzip -dc '" + path + "'").c_str(), "r"),
                                            pclose);
  unsigned char header[16];
  size_t headerBytes = 4 + 4 * static_cast<size_t>(dims), bytes = 1;
  if (!in || std::fread(header, 1, headerBytes, in.get()) != headerBytes || header[2] != 0x08 ||
      header[3] != dims)
    throw std::runtime_error(path + " is not an IDX file of bytes");
  for (int d = 0; d < dims; ++d) {
    const unsigned char *s = header + 4 + 4 * d;
    bytes *= (size_t{s[0]} << 24) | (size_t{s[1]} << 16) | (size_t{s[2]} << 8) | s[3];
  }
  std::vector<unsigned char> data(bytes);
  if (std::fread(data.data(), 1, bytes, in.get()) != bytes)
    throw std::runtime_error(path + " ends early");
  return data;
}

struct Split {
  std::vector<unsigned char> images, labels;
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  /// Examples order[first..] as a batch (pixels / 255); zeros past the end.
  void batch(const std::vector<int64_t> &order, int64_t first, std::vector<float> &input,
             std::vector<int64_t> &target) const {
    const int64_t rows = static_cast<int64_t>(target.size());
    for (int64_t r = 0; r < rows; ++r) {
      bool real = first + r < size();
      int64_t i = real ? order[first + r] : 0;
      for (int64_t p = 0; p < 784; ++p)
        input[r * 784 + p] = real ? images[i * 784 + p] / 255.0f : 0.0f;
      target[r] = real ? labels[i] : 0;
    }
  }
};

Split load(const std::string &dir, const std::string &prefix) {
  return {readIdx(dir + "/" + prefix + "-images-idx3-ubyte.gz", 3),
          readIdx(dir + "/" + prefix + "-labels-idx1-ubyte.gz", 1)};
}

} // namespace

int main(int argc, char **argv) try {
  if (argc != 4) {
    std::fprintf(stderr, "usage: train ARTIFACT FASHION_MNIST_DIR CHECKPOINT\n");
    return 2;
  }
  sinter_artifact *opened = nullptr;
  check(sinter_artifact_open(argv[1], &opened), "opening the artifact");
  Artifact artifact(opened);
  Session train(artifact.get(), "train_step"), predict(artifact.get(), "predict");
  const int64_t batch = train.batch();
  Split trainSet = load(argv[2], "train"), testSet = load(argv[2], "t10k");

  std::vector<int64_t> order(static_cast<size_t>(trainSet.size()));
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int64_t>(i);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(0));
  std::vector<float> input(static_cast<size_t>(batch * 784)), loss(1),
      logits(static_cast<size_t>(batch * 10));
  std::vector<int64_t> target(static_cast<size_t>(batch));
  const int64_t steps = trainSet.size() / batch; // the last partial batch is dropped
  for (int64_t s = 0; s < steps; ++s) {
    trainSet.batch(order, s * batch, input, target);
    train.set("input", input);
    train.set("target", target);
    train.run();
    if ((s + 1) % 100 == 0 || s + 1 == steps) {
      train.get("loss", loss);
      std::printf("step %lld/%lld  loss %.4f\n", static_cast<long long>(train.step()),
                  static_cast<long long>(steps), loss[0]);
    }
  }

  predict.takeStateOf(train);
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int64_t>(i);
  int64_t correct = 0;
  for (int64_t first = 0; first < testSet.size(); first += batch) {
    testSet.batch(order, first, input, target);
    predict.set("input", input);
    predict.run();
    predict.get("logits", logits);
    for (int64_t r = 0; r < batch && first + r < testSet.size(); ++r) {
      auto row = logits.begin() + r * 10;
      correct += std::max_element(row, row + 10) - row == target[static_cast<size_t>(r)];
    }
  }
  std::printf("test accuracy %.2f%% (%lld images)\n",
              100.0 * static_cast<double>(correct) / static_cast<double>(testSet.size()),
              static_cast<long long>(testSet.size()));
  train.save(argv[3]);
  std::printf("saved %s at step %lld\n", argv[3], static_cast<long long>(train.step()));
  return 0;
} catch (const std::exception &error) {
  std::fprintf(stderr, "train: %s\n", error.what());
  return 1;
}
