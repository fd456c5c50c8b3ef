//===- CApi.cpp - the C API over Artifact and StepSession -----------------===//
#include "CApiInternal.h"

#include "sinter/runtime/Artifact.h"
#include "sinter/runtime/CudaExecutable.h"
#include "sinter/runtime/StepSession.h"

#include <exception>
#include <map>
#include <new>
#include <string>

struct sinter_artifact {
  std::unique_ptr<sinter::runtime::Artifact> artifact;
};

struct sinter_session {
  std::unique_ptr<sinter::runtime::StepSession> session;
  std::string model; // the artifact's zoo model, "" for a user's step
};

namespace {
thread_local std::string lastError;
} // namespace

namespace sinter::runtime::c_api {

int fail(int code, std::string message) {
  lastError = std::move(message);
  return code;
}

namespace {
int codeOf(const absl::Status &status) {
  switch (status.code()) {
  case absl::StatusCode::kOk:
    return SINTER_OK;
  case absl::StatusCode::kInvalidArgument:
    return SINTER_ERROR_INVALID_ARGUMENT;
  case absl::StatusCode::kNotFound:
    return SINTER_ERROR_NOT_FOUND;
  case absl::StatusCode::kFailedPrecondition:
    return SINTER_ERROR_FAILED_PRECONDITION;
  case absl::StatusCode::kResourceExhausted:
    return SINTER_ERROR_RESOURCE_EXHAUSTED;
  case absl::StatusCode::kOutOfRange:
    return SINTER_ERROR_OUT_OF_RANGE;
  case absl::StatusCode::kUnimplemented:
    return SINTER_ERROR_UNIMPLEMENTED;
  default:
    return SINTER_ERROR_INTERNAL;
  }
}
} // namespace

int report(const absl::Status &status, std::string_view call) {
  if (status.ok())
    return SINTER_OK;
  std::string message(status.message());
  if (!call.empty())
    message = std::string(call) + ": " + message;
  return fail(codeOf(status), std::move(message));
}

int nullArgument(const char *call, const char *what) {
  return fail(SINTER_ERROR_INVALID_ARGUMENT, std::string(call) + ": " + what + " is NULL");
}

} // namespace sinter::runtime::c_api

using namespace sinter::runtime::c_api;

namespace {

/// The batch inputs or the results of a session's signature.
std::vector<const sinter::runtime::Program::Value *> tensorsOf(const sinter_session *session,
                                                               bool inputs) {
  std::vector<const sinter::runtime::Program::Value *> values;
  const sinter::runtime::Program &program = session->session->program();
  if (inputs) {
    for (const auto &value : program.signature.arguments)
      if (value.role == sinter::runtime::Program::Role::BatchInput)
        values.push_back(&value);
  } else {
    for (const auto &value : program.signature.results)
      values.push_back(&value);
  }
  return values;
}

int describeTensor(const sinter_session *session, bool inputs, int index, const char **name,
                   const char **dtype, int *rank, const int64_t **shape, size_t *bytes) {
  const char *call = inputs ? "sinter_session_input" : "sinter_session_output";
  if (session == nullptr)
    return nullArgument(call, "the session");
  std::vector<const sinter::runtime::Program::Value *> values = tensorsOf(session, inputs);
  if (index < 0 || static_cast<size_t>(index) >= values.size())
    return fail(SINTER_ERROR_NOT_FOUND, std::string(call) + ": index " + std::to_string(index) +
                                            " is not below " + std::to_string(values.size()));
  const sinter::runtime::Program::Value &value = *values[index];
  if (name != nullptr)
    *name = value.name.c_str();
  if (dtype != nullptr)
    *dtype = value.dtype.c_str();
  if (rank != nullptr)
    *rank = static_cast<int>(value.shape.size());
  if (shape != nullptr)
    *shape = value.shape.data();
  if (bytes != nullptr) {
    int64_t count = sinter::runtime::elementBytesOf(value.dtype);
    for (int64_t extent : value.shape)
      count *= extent;
    *bytes = static_cast<size_t>(count);
  }
  return SINTER_OK;
}

} // namespace

extern "C" {

const char *sinter_last_error(void) { return lastError.c_str(); }

int sinter_artifact_open(const char *path, sinter_artifact **out) {
  return guarded("sinter_artifact_open", [&]() -> int {
    if (path == nullptr)
      return nullArgument("sinter_artifact_open", "the path");
    if (out == nullptr)
      return nullArgument("sinter_artifact_open", "the result pointer");
    *out = nullptr;
    auto opened = sinter::runtime::Artifact::open(path);
    if (!opened.ok())
      return report(opened.status());
    *out = new (std::nothrow) sinter_artifact{std::move(*opened)};
    return *out == nullptr ? fail(SINTER_ERROR_RESOURCE_EXHAUSTED, "out of memory") : SINTER_OK;
  });
}

void sinter_artifact_close(sinter_artifact *artifact) { delete artifact; }

int sinter_artifact_function_count(const sinter_artifact *artifact) {
  if (artifact == nullptr)
    return nullArgument("sinter_artifact_function_count", "the artifact"), -1;
  return static_cast<int>(artifact->artifact->functions().size());
}

const char *sinter_artifact_function_name(const sinter_artifact *artifact, int index) {
  if (artifact == nullptr || index < 0 ||
      static_cast<size_t>(index) >= artifact->artifact->functions().size()) {
    fail(SINTER_ERROR_NOT_FOUND, "sinter_artifact_function_name: no function " +
                                     std::to_string(index) +
                                     (artifact == nullptr ? " (NULL artifact)" : ""));
    return nullptr;
  }
  return artifact->artifact->functions()[index].c_str();
}

int sinter_session_open(sinter_artifact *artifact, const char *function, sinter_session **out) {
  return guarded("sinter_session_open", [&]() -> int {
    if (artifact == nullptr)
      return nullArgument("sinter_session_open", "the artifact");
    if (function == nullptr)
      return nullArgument("sinter_session_open", "the function");
    if (out == nullptr)
      return nullArgument("sinter_session_open", "the result pointer");
    *out = nullptr;
    const sinter::runtime::Artifact &a = *artifact->artifact;
    const sinter::runtime::Program *program = a.function(function);
    if (program == nullptr) {
      std::string names;
      for (const std::string &name : a.functions())
        names += (names.empty() ? "" : ", ") + name;
      return fail(SINTER_ERROR_NOT_FOUND,
                  a.dir() + " has no function '" + function + "'; its functions: " + names);
    }
    // A CUDA artifact runs on cuda:0: the GPU whose cubin Artifact::open
    // chose, or the simulator (Note [CUDA artifacts]).
    sinter::runtime::CudaDevice *device = nullptr;
    if (a.target().kind == "cuda") {
      auto cuda = sinter::runtime::cudaDevice(0);
      if (!cuda.ok())
        return report(cuda.status());
      device = *cuda;
    }
    auto session = sinter::runtime::StepSession::open(*program, a.optimizer().schedule, 0, device);
    if (!session.ok())
      return report(session.status());
    absl::Status loaded = (*session)->load({a.weightsPath(), a.optimizerPath()});
    if (!loaded.ok())
      return report(loaded);
    *out = new (std::nothrow) sinter_session{std::move(*session), a.model()};
    return *out == nullptr ? fail(SINTER_ERROR_RESOURCE_EXHAUSTED, "out of memory") : SINTER_OK;
  });
}

void sinter_session_close(sinter_session *session) { delete session; }

int sinter_session_load(sinter_session *session, const char *path) {
  return guarded("sinter_session_load", [&]() -> int {
    if (session == nullptr)
      return nullArgument("sinter_session_load", "the session");
    if (path == nullptr)
      return nullArgument("sinter_session_load", "the path");
    return report(session->session->load(std::string(path)));
  });
}

int sinter_session_save(sinter_session *session, const char *path) {
  return guarded("sinter_session_save", [&]() -> int {
    if (session == nullptr)
      return nullArgument("sinter_session_save", "the session");
    if (path == nullptr)
      return nullArgument("sinter_session_save", "the path");
    std::map<std::string, std::string> metadata;
    if (!session->model.empty())
      metadata["model"] = session->model;
    return report(session->session->save(path, metadata));
  });
}

int sinter_session_copy_state(sinter_session *to, const sinter_session *from) {
  return guarded("sinter_session_copy_state", [&]() -> int {
    if (to == nullptr || from == nullptr)
      return nullArgument("sinter_session_copy_state", "a session");
    return report(to->session->copyStateFrom(*from->session));
  });
}

int sinter_session_set_input(sinter_session *session, const char *name, const void *data,
                             size_t bytes) {
  return guarded("sinter_session_set_input", [&]() -> int {
    if (session == nullptr)
      return nullArgument("sinter_session_set_input", "the session");
    if (name == nullptr)
      return nullArgument("sinter_session_set_input", "the name");
    if (data == nullptr && bytes > 0)
      return nullArgument("sinter_session_set_input", "the data");
    return report(session->session->setInput(name, data, bytes));
  });
}

int sinter_session_run(sinter_session *session) {
  return guarded("sinter_session_run", [&]() -> int {
    if (session == nullptr)
      return nullArgument("sinter_session_run", "the session");
    return report(session->session->run());
  });
}

int sinter_session_set_process_group(sinter_session *session, sinter_process_group *group) {
  if (session == nullptr)
    return nullArgument("sinter_session_set_process_group", "the session");
  session->session->setCommunicator(group == nullptr ? nullptr : group->group->communicator.get());
  return SINTER_OK;
}

int sinter_session_get_output(sinter_session *session, const char *name, void *data, size_t bytes) {
  return guarded("sinter_session_get_output", [&]() -> int {
    if (session == nullptr)
      return nullArgument("sinter_session_get_output", "the session");
    if (name == nullptr)
      return nullArgument("sinter_session_get_output", "the name");
    if (data == nullptr && bytes > 0)
      return nullArgument("sinter_session_get_output", "the data");
    return report(session->session->output(name, data, bytes));
  });
}

int64_t sinter_session_step(const sinter_session *session) {
  return session == nullptr ? -1 : session->session->step();
}

int sinter_session_input_count(const sinter_session *session) {
  if (session == nullptr)
    return nullArgument("sinter_session_input_count", "the session"), -1;
  return static_cast<int>(tensorsOf(session, true).size());
}

int sinter_session_output_count(const sinter_session *session) {
  if (session == nullptr)
    return nullArgument("sinter_session_output_count", "the session"), -1;
  return static_cast<int>(tensorsOf(session, false).size());
}

int sinter_session_input(const sinter_session *session, int index, const char **name,
                         const char **dtype, int *rank, const int64_t **shape, size_t *bytes) {
  return describeTensor(session, true, index, name, dtype, rank, shape, bytes);
}

int sinter_session_output(const sinter_session *session, int index, const char **name,
                          const char **dtype, int *rank, const int64_t **shape, size_t *bytes) {
  return describeTensor(session, false, index, name, dtype, rank, shape, bytes);
}

int sinter_session_planned_memory(const sinter_session *session, int64_t *step_bytes,
                                  int64_t *input_bytes) {
  return guarded("sinter_session_planned_memory", [&]() -> int {
    if (session == nullptr)
      return nullArgument("sinter_session_planned_memory", "the session");
    const sinter::runtime::Program &program = session->session->program();
    sinter::runtime::Allocation allocation = sinter::runtime::allocationOf(program);
    if (step_bytes != nullptr)
      *step_bytes = allocation.arena + allocation.results;
    if (input_bytes != nullptr) {
      int64_t bytes = 0;
      for (int b : program.arguments)
        bytes += program.buffers[b].bytes;
      *input_bytes = bytes;
    }
    return SINTER_OK;
  });
}

} // extern "C"
