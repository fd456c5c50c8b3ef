/*===- train.c - train a Sinter artifact on Fashion-MNIST, in C -----------===*
 *
 *   sinter-compile --model mlp --batch-size 64 --learning-rate 0.002 \
 *       --weight-decay 0.0001 --schedule warmup-cosine:50:938:0.0001 -o mlp.sinter
 *   ./train mlp.sinter /usr/share/datasets/fashion-mnist mlp.safetensors
 *
 * Trains the artifact's train_step for one epoch of shuffled batches through
 * Sinter's C API (libsinter_runtime alone: no compiler, no MLIR), reports the
 * test accuracy from its predict function, and saves the state as a
 * checkpoint that `sinter-train --model mlp --resume mlp.safetensors`
 * continues from. The images are read with gzip -dc (no zlib needed).
 *
 *===----------------------------------------------------------------------===*/
#include <sinter/runtime/c_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIXELS (28 * 28)
#define CLASSES 10

static void check(int code, const char *what) {
  if (code != SINTER_OK) {
    fprintf(stderr, "train: %s: %s (error %d)\n", what, sinter_last_error(), code);
    exit(1);
  }
}

static void *allocate(size_t bytes) {
  void *p = malloc(bytes);
  if (p == NULL) {
    fprintf(stderr, "train: out of memory\n");
    exit(1);
  }
  return p;
}

/* An IDX file (big-endian sizes after a 4-byte magic) of `dims` dimensions:
   its items and their bytes. Read through gzip -dc. */
static unsigned char *read_idx(const char *dir, const char *name, int dims, long *count) {
  char command[4096];
  if (strchr(dir, '\'') != NULL ||
      snprintf(command, sizeof command, "gzip -dc '%s/%s'", dir, name) >= (int)sizeof command) {
    fprintf(stderr, "train: cannot read the data folder %s\n", dir);
    exit(1);
  }
  FILE *in = popen(command, "r");
  unsigned char header[16];
  size_t headerBytes = 4 + 4 * (size_t)dims, item = 1;
  if (in == NULL || fread(header, 1, headerBytes, in) != headerBytes || header[2] != 0x08 ||
      header[3] != dims) {
    fprintf(stderr, "train: %s/%s is not an IDX file of bytes with %d dimensions\n", dir, name,
            dims);
    exit(1);
  }
  for (int d = 0; d < dims; ++d) {
    const unsigned char *s = header + 4 + 4 * d;
    long size = ((long)s[0] << 24) | ((long)s[1] << 16) | ((long)s[2] << 8) | s[3];
    if (d == 0)
      *count = size;
    else
      item *= (size_t)size;
  }
  size_t bytes = (size_t)*count * item;
  unsigned char *data = allocate(bytes);
  if (fread(data, 1, bytes, in) != bytes || pclose(in) != 0) {
    fprintf(stderr, "train: %s/%s ends early\n", dir, name);
    exit(1);
  }
  return data;
}

/* Batch `b` of `order` (pixels scaled to 0..1, as sinter-train does); rows
   past `count` are zeros. */
static void gather(const unsigned char *images, const unsigned char *labels, const long *order,
                   long first, long count, long batch, float *input, int64_t *target) {
  for (long r = 0; r < batch; ++r) {
    long i = first + r < count ? order[first + r] : -1;
    for (int p = 0; p < PIXELS; ++p)
      input[r * PIXELS + p] = i < 0 ? 0.0f : images[i * PIXELS + p] / 255.0f;
    target[r] = i < 0 ? 0 : labels[i];
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: train ARTIFACT FASHION_MNIST_DIR CHECKPOINT\n");
    return 2;
  }
  sinter_artifact *artifact;
  sinter_session *train, *predict;
  check(sinter_artifact_open(argv[1], &artifact), "opening the artifact");
  check(sinter_session_open(artifact, "train_step", &train), "opening train_step");
  check(sinter_session_open(artifact, "predict", &predict), "opening predict");

  /* The batch size is the artifact's: its "input" is f32[batch, 784]. */
  const char *name = "", *dtype = "";
  int rank = 0;
  const int64_t *shape = NULL;
  for (int i = 0; i < sinter_session_input_count(train) && strcmp(name, "input") != 0; ++i)
    check(sinter_session_input(train, i, &name, &dtype, &rank, &shape, NULL), "reading the inputs");
  if (strcmp(name, "input") != 0 || strcmp(dtype, "f32") != 0 || rank != 2 || shape[1] != PIXELS) {
    fprintf(stderr, "train: %s takes %s input of rank %d, not an mlp's f32[batch, 784]\n", argv[1],
            dtype, rank);
    return 1;
  }
  long batch = (long)shape[0];

  long trainCount, testCount, labelCount;
  unsigned char *trainImages = read_idx(argv[2], "train-images-idx3-ubyte.gz", 3, &trainCount);
  unsigned char *trainLabels = read_idx(argv[2], "train-labels-idx1-ubyte.gz", 1, &labelCount);
  unsigned char *testImages = read_idx(argv[2], "t10k-images-idx3-ubyte.gz", 3, &testCount);
  unsigned char *testLabels = read_idx(argv[2], "t10k-labels-idx1-ubyte.gz", 1, &labelCount);

  /* One epoch in a shuffled order (Fisher-Yates, xorshift64). */
  long *order = allocate(sizeof(long) * (size_t)trainCount);
  uint64_t state = 0x9E3779B97F4A7C15u;
  for (long i = 0; i < trainCount; ++i)
    order[i] = i;
  for (long i = trainCount - 1; i > 0; --i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    long j = (long)(state % (uint64_t)(i + 1)), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  float *input = allocate(sizeof(float) * (size_t)(batch * PIXELS));
  int64_t *target = allocate(sizeof(int64_t) * (size_t)batch);
  long steps = trainCount / batch; /* the last partial batch is dropped */
  for (long s = 0; s < steps; ++s) {
    gather(trainImages, trainLabels, order, s * batch, trainCount, batch, input, target);
    check(sinter_session_set_input(train, "input", input, sizeof(float) * batch * PIXELS),
          "setting the input");
    check(sinter_session_set_input(train, "target", target, sizeof(int64_t) * batch),
          "setting the target");
    check(sinter_session_run(train), "running train_step");
    if ((s + 1) % 100 == 0 || s + 1 == steps) {
      float loss;
      check(sinter_session_get_output(train, "loss", &loss, sizeof loss), "reading the loss");
      printf("step %lld/%ld  loss %.4f\n", (long long)sinter_session_step(train), steps, loss);
    }
  }

  /* The test set through predict, with the trained parameters (no file in
     between); the last batch is padded with zeros. */
  check(sinter_session_copy_state(predict, train), "sharing the parameters");
  float *logits = allocate(sizeof(float) * (size_t)(batch * CLASSES));
  long correct = 0;
  for (long i = 0; i < testCount; ++i)
    order[i] = i;
  for (long first = 0; first < testCount; first += batch) {
    gather(testImages, testLabels, order, first, testCount, batch, input, target);
    check(sinter_session_set_input(predict, "input", input, sizeof(float) * batch * PIXELS),
          "setting the input");
    check(sinter_session_run(predict), "running predict");
    check(sinter_session_get_output(predict, "logits", logits, sizeof(float) * batch * CLASSES),
          "reading the logits");
    for (long r = 0; r < batch && first + r < testCount; ++r) {
      int best = 0;
      for (int c = 1; c < CLASSES; ++c)
        if (logits[r * CLASSES + c] > logits[r * CLASSES + best])
          best = c;
      correct += best == target[r];
    }
  }
  printf("test accuracy %.2f%% (%ld images)\n", 100.0 * (double)correct / (double)testCount,
         testCount);
  check(sinter_session_save(train, argv[3]), "saving the checkpoint");
  printf("saved %s at step %lld\n", argv[3], (long long)sinter_session_step(train));

  sinter_session_close(predict);
  sinter_session_close(train);
  sinter_artifact_close(artifact);
  free(trainImages), free(trainLabels), free(testImages), free(testLabels);
  free(order), free(input), free(target), free(logits);
  return 0;
}
