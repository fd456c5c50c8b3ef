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

/* Copies a batch input in (into the GPU's memory for a CUDA artifact). */
int sinter_session_set_input(sinter_session *session, const char *name, const void *data,
                             size_t bytes);
/* Runs one step. On a GPU the state stays in its memory from run to run and
   the run is queued, not waited for: reading an output or saving waits.
   The updates are written into the state's memory, so a run that fails may
   leave it partly updated (the error says so): load it again. */
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

/* Many processes (docs/AOT.md, "Many processes"). A train step exported
   with its gradients reduced over the ranks (distributed::reduce_gradients
   after the backward pass, in any world) runs on every rank of a job, each
   on its own rows of the global batch, its collectives through the
   session's process group:

     sinter_process_group *group;           (under sinter-run, torchrun,
     sinter_process_group_init(&group);      srun or mpirun)
     sinter_session_set_process_group(train, group);
     ... set this rank's inputs, run ...
     sinter_process_group_all_reduce(group, &loss, 1, "f32", "mean");

   sinter_session_set_process_group is in libsinter_runtime; the
   sinter_process_group_* functions are in libsinter_collectives (link it
   too: it brings Gloo). */
typedef struct sinter_process_group sinter_process_group;

/* Joins the process group that the launcher describes in the environment
   (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from sinter-run or torchrun;
   SLURM_* from srun; OMPI_COMM_WORLD_* or PMIX_RANK from mpirun); a world of
   one when started by none. Rank 0 (or sinter-run's agent) hosts the
   rendezvous store, every rank connects to every other. Fails naming the
   variable, or the rank that did not arrive within the collective timeout
   (SINTER_COLLECTIVE_TIMEOUT seconds, 300 by default). */
int sinter_process_group_init(sinter_process_group **out);
/* Leaves the group (its connections close). Destroy it after the sessions
   that use it have stopped running. */
void sinter_process_group_destroy(sinter_process_group *group);
/* This process's rank, the world's size, its rank on its machine (-1 for a
   null group). */
int sinter_process_group_rank(const sinter_process_group *group);
int sinter_process_group_size(const sinter_process_group *group);
int sinter_process_group_local_rank(const sinter_process_group *group);
/* Combines `count` elements of `dtype` ("f32", "f64", "f16", "bf16", "i32",
   "i64", "bool") at `data` over the ranks, in place, by `op` ("sum",
   "mean", "max" or "min"; mean: floating types): a loss or a metric as
   every rank sees it. Every rank calls it with the same count, dtype and
   op. A rank that died or stopped makes it fail within the collective
   timeout, naming the peer where it can; the group then stays failed. */
int sinter_process_group_all_reduce(sinter_process_group *group, void *data, int64_t count,
                                    const char *dtype, const char *op);
int sinter_process_group_barrier(sinter_process_group *group);

/* The session's collectives (a step that reduces over the ranks) run
   through `group` from its next run on; NULL: none (such a step is then
   refused). In a world of one every reduction leaves its values as they
   are. The group must outlive the session's runs. */
int sinter_session_set_process_group(sinter_session *session, sinter_process_group *group);

#ifdef __cplusplus
}
#endif

#endif /* SINTER_RUNTIME_C_API_H */
