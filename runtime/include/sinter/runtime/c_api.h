/*===- c_api.h - Sinter's runtime from C and any language with a C FFI ----===*
 *
 * Opens an artifact that sinter-compile wrote (NAME.sinter/) and runs its
 * functions (train_step, predict) in sessions that own the model's state,
 * with nothing but libsinter_runtime: no compiler, no MLIR. docs/AOT.md
 * has the whole guide.
 *
 *   sinter_artifact *artifact;
 *   sinter_session *train;
 *   if (sinter_artifact_open("mlp.sinter", &artifact) != SINTER_OK ||
 *       sinter_session_open(artifact, "train_step", &train) != SINTER_OK)
 *     fprintf(stderr, "%s\n", sinter_last_error());
 *   sinter_session_set_input(train, "input", images, sizeof images);
 *   sinter_session_set_input(train, "target", labels, sizeof labels);
 *   sinter_session_run(train);
 *   sinter_session_get_output(train, "loss", &loss, sizeof loss);
 *
 * Every call that can fail returns SINTER_OK (0) or one of the error codes
 * below, and sinter_last_error() returns the calling thread's message for
 * the last failure (a file, a name, the fix). Handles are opaque. Calls on
 * different sessions may run on different threads at once; one session is
 * used by one thread at a time. A session keeps its artifact open: close
 * the sessions first. C99 and C++.
 *
 *===----------------------------------------------------------------------===*/
#ifndef SINTER_RUNTIME_C_API_H
#define SINTER_RUNTIME_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The error codes. */
enum {
  SINTER_OK = 0,
  /* A bad argument: a null pointer, a name that is no input, a byte count
     that is not the tensor's, a malformed file. */
  SINTER_ERROR_INVALID_ARGUMENT = 1,
  /* A file, function, tensor or output that does not exist. */
  SINTER_ERROR_NOT_FOUND = 2,
  /* Not now or not here: an input not set, a CPU without the features the
     kernels need, a shared library not installed, a file whose checksum
     differs, an artifact of a newer format. */
  SINTER_ERROR_FAILED_PRECONDITION = 3,
  /* Out of memory. */
  SINTER_ERROR_RESOURCE_EXHAUSTED = 4,
  /* A NaN where checked numerics found one, or another value out of
     range. */
  SINTER_ERROR_OUT_OF_RANGE = 5,
  /* What this build cannot do (a CUDA artifact without the CUDA backend). */
  SINTER_ERROR_UNIMPLEMENTED = 6,
  /* A file that cannot be written, or anything else. */
  SINTER_ERROR_INTERNAL = 7
};

typedef struct sinter_artifact sinter_artifact;
typedef struct sinter_session sinter_session;

/* The calling thread's message for its last failed call ("" if none). Valid
   until that thread's next call. */
const char *sinter_last_error(void);

/* Opens and checks the whole artifact at `path` (manifest, checksums, CPU
   features, shared libraries, programs) before anything runs. */
int sinter_artifact_open(const char *path, sinter_artifact **out);
void sinter_artifact_close(sinter_artifact *artifact);
/* Its functions: their count, and each one's name (NULL past the end). */
int sinter_artifact_function_count(const sinter_artifact *artifact);
const char *sinter_artifact_function_name(const sinter_artifact *artifact, int index);

/* A session of `function`, with the artifact's weights (and, for a function
   that updates it, optimizer state) loaded, at step 0. */
int sinter_session_open(sinter_artifact *artifact, const char *function, sinter_session **out);
void sinter_session_close(sinter_session *session);

/* Loads the state the function needs, by name, from a safetensors file:
   parameters, and optimizer state when the function has any (a predict
   session loading a training checkpoint takes its parameters). The file's
   "step" metadata, when present, becomes the step count. */
int sinter_session_load(sinter_session *session, const char *safetensors_path);
/* Saves the state to `safetensors_path` atomically (a crash leaves the old
   file or the new one), with the step count. */
int sinter_session_save(sinter_session *session, const char *safetensors_path);
/* Copies every state tensor `to` has a namesake of in `from` (a predict
   session takes a train session's parameters, without a file). */
int sinter_session_copy_state(sinter_session *to, const sinter_session *from);

int sinter_session_set_input(sinter_session *session, const char *name, const void *data,
                             size_t bytes);
int sinter_session_run(sinter_session *session);
int sinter_session_get_output(sinter_session *session, const char *name, void *data,
                              size_t bytes);
/* Optimizer steps taken (-1 for a null session). */
int64_t sinter_session_step(const sinter_session *session);

/* Introspection. A tensor's name, dtype ("f32", "i64", ...), rank and shape
   (valid while the session is open), and its bytes. */
int sinter_session_input_count(const sinter_session *session);
int sinter_session_output_count(const sinter_session *session);
int sinter_session_input(const sinter_session *session, int index, const char **name,
                         const char **dtype, int *rank, const int64_t **shape, size_t *bytes);
int sinter_session_output(const sinter_session *session, int index, const char **name,
                          const char **dtype, int *rank, const int64_t **shape, size_t *bytes);
/* The planned memory of one run: the step's own bytes (its arena and the
   results it allocates), and the inputs and state it reads. */
int sinter_session_planned_memory(const sinter_session *session, int64_t *step_bytes,
                                  int64_t *input_bytes);

#ifdef __cplusplus
}
#endif

#endif /* SINTER_RUNTIME_C_API_H */
