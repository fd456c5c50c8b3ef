/*===- train_artifact.c - an artifact trained through the C API alone ----===*
 *
 * Usage: train_artifact ARTIFACT BATCHES STEPS LOSSES CHECKPOINT
 *
 * Opens ARTIFACT (sinter-compile's), trains its train_step for STEPS steps
 * on the batches in BATCHES (per step: each input of the step, in the
 * session's order, as its raw bytes), writes each step's loss (f32) to
 * LOSSES, saves the state to CHECKPOINT, then evaluates predict on the
 * first batch's "input" with the trained parameters (taken from the train
 * session, no file in between) and appends the logits to LOSSES. Links
 * libsinter_runtime only: the test that runs it checks that the losses and
 * state are the just-in-time path's to the bit (tests/unit/compiler/
 * AotTest.cpp). C99.
 *
 *===----------------------------------------------------------------------===*/
#include "sinter/runtime/c_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(int code, const char *what) {
  if (code != SINTER_OK) {
    fprintf(stderr, "train_artifact: %s failed (%d): %s\n", what, code, sinter_last_error());
    exit(1);
  }
  return code;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: train_artifact ARTIFACT BATCHES STEPS LOSSES CHECKPOINT\n");
    return 2;
  }
  sinter_artifact *artifact = NULL;
  sinter_session *train = NULL, *predict = NULL;
  check(sinter_artifact_open(argv[1], &artifact), "sinter_artifact_open");
  check(sinter_session_open(artifact, "train_step", &train), "sinter_session_open(train_step)");
  check(sinter_session_open(artifact, "predict", &predict), "sinter_session_open(predict)");
  FILE *batches = fopen(argv[2], "rb"), *losses = fopen(argv[4], "wb");
  if (batches == NULL || losses == NULL) {
    fprintf(stderr, "train_artifact: cannot open %s or %s\n", argv[2], argv[4]);
    return 1;
  }
  long steps = strtol(argv[3], NULL, 10);
  int inputs = sinter_session_input_count(train);
  void *first = NULL;
  size_t firstBytes = 0;
  for (long step = 0; step < steps; ++step) {
    for (int i = 0; i < inputs; ++i) {
      const char *name;
      size_t bytes;
      check(sinter_session_input(train, i, &name, NULL, NULL, NULL, &bytes), "sinter_session_input");
      void *data = malloc(bytes);
      if (data == NULL || fread(data, 1, bytes, batches) != bytes) {
        fprintf(stderr, "train_artifact: %s ends before step %ld's %s\n", argv[2], step, name);
        return 1;
      }
      check(sinter_session_set_input(train, name, data, bytes), "sinter_session_set_input");
      if (step == 0 && strcmp(name, "input") == 0) {
        first = data;
        firstBytes = bytes;
      } else {
        free(data);
      }
    }
    check(sinter_session_run(train), "sinter_session_run");
    float loss;
    check(sinter_session_get_output(train, "loss", &loss, sizeof loss), "get_output(loss)");
    fwrite(&loss, sizeof loss, 1, losses);
  }
  if (sinter_session_step(train) != steps) {
    fprintf(stderr, "train_artifact: the session counts %lld steps, not %ld\n",
            (long long)sinter_session_step(train), steps);
    return 1;
  }
  check(sinter_session_save(train, argv[5]), "sinter_session_save");
  check(sinter_session_copy_state(predict, train), "sinter_session_copy_state");
  check(sinter_session_set_input(predict, "input", first, firstBytes), "set_input(predict)");
  check(sinter_session_run(predict), "sinter_session_run(predict)");
  size_t logitsBytes;
  check(sinter_session_output(predict, 0, NULL, NULL, NULL, NULL, &logitsBytes), "output(0)");
  float *logits = malloc(logitsBytes);
  check(sinter_session_get_output(predict, "logits", logits, logitsBytes), "get_output(logits)");
  fwrite(logits, 1, logitsBytes, losses);
  free(logits);
  free(first);
  fclose(losses);
  fclose(batches);
  sinter_session_close(predict);
  sinter_session_close(train);
  sinter_artifact_close(artifact);
  return 0;
}
