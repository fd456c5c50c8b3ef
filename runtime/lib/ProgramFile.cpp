//===- ProgramFile.cpp - a Program as JSON, and its careful reader --------===//
//
// The reader walks the document with a path of keys for its messages
// ("steps[3].inputs[1]: expected an integer, got a string"), takes numbers
// only when they are integers within their field's range, and leaves the
// Program's own rules (indices, kinds, sizes) to validateProgram, the check
// every loaded Program passes.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/ProgramFile.h"

#include "JsonReader.h"
#include "absl/strings/str_cat.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

namespace sinter::runtime {
namespace {

using Kind = Program::Step::Kind;
using Phase = Program::Step::Phase;

constexpr const char *kKindNames[] = {"kernel",         "gemm",       "fill",
                                      "copy",           "all_reduce", "all_reduce_done",
                                      "reduce_scatter", "all_gather"};
constexpr const char *kPhaseNames[] = {"forward", "backward", "update"};
/// Program::Buffer::Floats, in order.
constexpr const char *kFloatsNames[] = {"none", "f32", "f16", "bf16"};
constexpr Program::Role kRoles[] = {Program::Role::Parameter,  Program::Role::OptimizerState,
                                    Program::Role::BatchInput, Program::Role::StepScalar,
                                    Program::Role::RandomKey,  Program::Role::Output};

Json shapeOf(const LaunchShape &shape) {
  return {{"grid", {shape.grid[0], shape.grid[1], shape.grid[2]}},
          {"block", {shape.block[0], shape.block[1], shape.block[2]}},
          {"shared_bytes", shape.sharedBytes}};
}

Json gemmOf(const Gemm &gemm) {
  Json json = {{"transa", gemm.transa},
               {"transb", gemm.transb},
               {"m", gemm.m},
               {"n", gemm.n},
               {"k", gemm.k},
               {"lda", gemm.lda},
               {"ldb", gemm.ldb},
               {"ldc", gemm.ldc},
               {"batch", gemm.batch},
               {"stride_a", gemm.strideA},
               {"stride_b", gemm.strideB},
               {"stride_c", gemm.strideC},
               {"alpha", gemm.alpha},
               {"beta", gemm.beta},
               {"epilogue", gemm.epilogue == Gemm::Epilogue::Bias ? "bias" : "none"}};
  // Written only where allowed: a reader that predates it computes in f32,
  // which an allowance permits.
  if (gemm.tf32)
    json["tf32"] = true;
  return json;
}

Json stepOf(const Program::Step &step) {
  Json json = {{"kind", kKindNames[static_cast<int>(step.kind)]}};
  switch (step.kind) {
  case Kind::Fill:
    json["outputs"] = step.outputs;
    json["element"] = hexOf(step.element.data(), step.element.size());
    return json;
  case Kind::Copy:
    json["inputs"] = step.inputs;
    json["result"] = step.result;
    return json;
  case Kind::AllReduce:
  case Kind::AllReduceDone:
  case Kind::ReduceScatter:
  case Kind::AllGather:
    json["inputs"] = step.inputs;
    json["outputs"] = step.outputs;
    if (step.kind == Kind::ReduceScatter || step.kind == Kind::AllGather) {
      json["input_offsets"] = step.inputOffsets;
      json["ranks"] = step.ranks;
    }
    if (step.kind != Kind::AllGather)
      json["reduce"] = std::string(reduceOpName(step.reduce));
    json["dtype"] = std::string(elementTypeName(step.elementType));
    json["phase"] = kPhaseNames[static_cast<int>(step.phase)];
    json["label"] = step.label;
    json["lines"] = step.lines;
    return json;
  case Kind::Kernel:
  case Kind::Gemm:
    break;
  }
  json["kernel"] = step.kernel;
  json["inputs"] = step.inputs;
  json["outputs"] = step.outputs;
  json["input_offsets"] = step.inputOffsets;
  json["results"] = step.results;
  json["phase"] = kPhaseNames[static_cast<int>(step.phase)];
  json["label"] = step.label;
  json["lines"] = step.lines;
  if (step.kind == Kind::Gemm) {
    json["gemm"] = gemmOf(step.gemm);
    json["host"] = {{"openblas", step.host.openBlas}, {"one_thread", step.host.oneThread}};
  } else {
    json["shape"] = shapeOf(step.shape);
  }
  return json;
}

Json valuesOf(const std::vector<Program::Value> &values) {
  Json list = Json::array();
  for (const Program::Value &value : values) {
    Json entry = {{"name", value.name},
                  {"role", nameOf(value.role)},
                  {"dtype", value.dtype},
                  {"shape", value.shape}};
    if (value.formula)
      entry["formula"] = {{"kind", nameOf(value.formula->kind)},
                          {"parameter", value.formula->parameter}};
    if (value.random)
      entry["random"] = {{"seed", value.random->seed},
                         {"stream", value.random->stream},
                         {"streams_per_step", value.random->streamsPerStep},
                         {"at_step", value.random->atStep}};
    list.push_back(std::move(entry));
  }
  return list;
}

Json reportOf(const Program::Report &report) {
  Json uses = Json::array(), categories = Json::array();
  for (const auto &use : report.peakUses)
    uses.push_back({{"line", use.line}, {"example", use.example}, {"bytes", use.bytes}});
  for (const auto &category : report.peakCategories)
    categories.push_back({{"name", category.name}, {"bytes", category.bytes}});
  return {{"peak_uses", uses},
          {"peak_categories", categories},
          {"peak_workspace_bytes", report.peakWorkspaceBytes},
          {"peak_tensor_bytes", report.peakTensorBytes},
          {"recomputed_values", report.recomputedValues},
          {"recompute_operations", report.recomputeOperations},
          {"pipeline_runs", report.pipelineRuns},
          {"estimated_arena_bytes", report.estimatedArenaBytes}};
}

constexpr int64_t kMaxIndex = std::numeric_limits<int>::max();
constexpr int64_t kMaxBytes = kMaxProgramBytes;

std::vector<uint8_t> bytesOfHex(Reader &reader, const std::string &text, const std::string &path) {
  std::vector<uint8_t> bytes;
  auto digit = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (text.size() % 2 != 0 || text.size() > 16) {
    reader.fail(path, absl::StrCat("\"", text.substr(0, 20), "\" is not 1 to 8 bytes in hex"));
    return bytes;
  }
  for (size_t i = 0; i < text.size(); i += 2) {
    int high = digit(text[i]), low = digit(text[i + 1]);
    if (high < 0 || low < 0) {
      reader.fail(path, absl::StrCat("\"", text, "\" is not lowercase hex"));
      return {};
    }
    bytes.push_back(static_cast<uint8_t>(high * 16 + low));
  }
  return bytes;
}

void readShape(Reader &reader, const Json &json, const std::string &path, LaunchShape &shape) {
  for (const auto &[key, into] :
       {std::pair{"grid", &shape.grid[0]}, std::pair{"block", &shape.block[0]}}) {
    std::vector<int64_t> dims = reader.integers<int64_t>(json, path, key, 1, kMaxIndex);
    if (!reader.failed() && dims.size() != 3)
      reader.fail(Reader::join(path, key), absl::StrCat("has ", dims.size(), " sizes, not 3"));
    for (size_t d = 0; d < 3 && d < dims.size(); ++d)
      into[d] = dims[d];
  }
  shape.sharedBytes = reader.integer(json, path, "shared_bytes", 0, kMaxIndex);
}

void readGemm(Reader &reader, const Json &json, const std::string &path, Gemm &gemm) {
  gemm.transa = reader.boolean(json, path, "transa");
  gemm.transb = reader.boolean(json, path, "transb");
  int64_t *sizes[] = {&gemm.m,   &gemm.n,     &gemm.k,       &gemm.lda,     &gemm.ldb,
                      &gemm.ldc, &gemm.batch, &gemm.strideA, &gemm.strideB, &gemm.strideC};
  const char *names[] = {"m",   "n",     "k",        "lda",      "ldb",
                         "ldc", "batch", "stride_a", "stride_b", "stride_c"};
  for (size_t i = 0; i < std::size(sizes); ++i)
    *sizes[i] = reader.integer(json, path, names[i], 0, kMaxBytes);
  gemm.alpha = static_cast<float>(reader.number(json, path, "alpha", /*single=*/true));
  gemm.beta = static_cast<float>(reader.number(json, path, "beta", /*single=*/true));
  constexpr const char *kEpilogues[] = {"none", "bias"};
  gemm.epilogue = reader.oneOf(json, path, "epilogue", kEpilogues) == 1 ? Gemm::Epilogue::Bias
                                                                        : Gemm::Epilogue::None;
  if (json.is_object() && json.contains("tf32"))
    gemm.tf32 = reader.boolean(json, path, "tf32");
}

Program::Step readStep(Reader &reader, const Json &json, const std::string &path) {
  Program::Step step;
  int kind = reader.oneOf(json, path, "kind", kKindNames);
  if (kind < 0)
    return step;
  step.kind = static_cast<Kind>(kind);
  switch (step.kind) {
  case Kind::Fill:
    step.outputs = reader.integers<int>(json, path, "outputs", 0, kMaxIndex);
    step.element =
        bytesOfHex(reader, reader.string(json, path, "element"), Reader::join(path, "element"));
    return step;
  case Kind::Copy:
    step.inputs = reader.integers<int>(json, path, "inputs", 0, kMaxIndex);
    step.result = static_cast<int>(reader.integer(json, path, "result", 0, kMaxIndex));
    return step;
  case Kind::AllReduce:
  case Kind::AllReduceDone:
  case Kind::ReduceScatter:
  case Kind::AllGather: {
    step.inputs = reader.integers<int>(json, path, "inputs", 0, kMaxIndex);
    step.outputs = reader.integers<int>(json, path, "outputs", 0, kMaxIndex);
    step.results = static_cast<int>(step.outputs.size());
    if (step.kind == Kind::ReduceScatter || step.kind == Kind::AllGather) {
      step.inputOffsets = reader.integers<int64_t>(json, path, "input_offsets", 0, kMaxBytes);
      step.ranks = static_cast<int>(reader.integer(json, path, "ranks", 1, kMaxIndex));
    }
    // The names as the communicator knows them (sinter/runtime/Communicator.h).
    auto named = [&](const char *key, auto parse, auto &into) {
      std::string text = reader.string(json, path, key);
      if (reader.failed())
        return;
      auto value = parse(text);
      if (value.ok())
        into = *value;
      else
        reader.fail(Reader::join(path, key), std::string(value.status().message()));
    };
    if (step.kind != Kind::AllGather)
      named("reduce", reduceOpNamed, step.reduce);
    named("dtype", elementTypeNamed, step.elementType);
    int phase = reader.oneOf(json, path, "phase", kPhaseNames);
    step.phase = static_cast<Phase>(phase < 0 ? 0 : phase);
    step.label = reader.string(json, path, "label");
    step.lines = reader.string(json, path, "lines");
    return step;
  }
  case Kind::Kernel:
  case Kind::Gemm:
    break;
  }
  step.kernel = static_cast<int>(reader.integer(json, path, "kernel", 0, kMaxKernels - 1));
  step.inputs = reader.integers<int>(json, path, "inputs", 0, kMaxIndex);
  step.outputs = reader.integers<int>(json, path, "outputs", 0, kMaxIndex);
  step.inputOffsets = reader.integers<int64_t>(json, path, "input_offsets", 0, kMaxBytes);
  step.results = static_cast<int>(reader.integer(json, path, "results", 0, kMaxIndex));
  int phase = reader.oneOf(json, path, "phase", kPhaseNames);
  step.phase = static_cast<Phase>(phase < 0 ? 0 : phase);
  step.label = reader.string(json, path, "label");
  step.lines = reader.string(json, path, "lines");
  if (step.kind == Kind::Gemm) {
    if (const Json *gemm = reader.field(json, path, "gemm"))
      readGemm(reader, *gemm, Reader::join(path, "gemm"), step.gemm);
    if (const Json *host = reader.field(json, path, "host")) {
      std::string at = Reader::join(path, "host");
      step.host.openBlas = reader.boolean(*host, at, "openblas");
      step.host.oneThread = reader.boolean(*host, at, "one_thread");
    }
  } else if (const Json *shape = reader.field(json, path, "shape")) {
    readShape(reader, *shape, Reader::join(path, "shape"), step.shape);
  }
  return step;
}

std::vector<Program::Value> readValues(Reader &reader, const Json &json, const std::string &path,
                                       const char *key) {
  std::vector<Program::Value> values;
  const Json *list = reader.array(json, path, key);
  if (list == nullptr)
    return values;
  constexpr const char *kRoleNames[] = {"parameter",   "optimizer_state", "batch_input",
                                        "step_scalar", "random_key",      "output"};
  for (size_t i = 0; i < list->size() && !reader.failed(); ++i) {
    std::string at = Reader::index(Reader::join(path, key), i);
    const Json &entry = (*list)[i];
    Program::Value &value = values.emplace_back();
    value.name = reader.string(entry, at, "name");
    int role = reader.oneOf(entry, at, "role", kRoleNames);
    value.role = kRoles[role < 0 ? 0 : role];
    value.dtype = reader.string(entry, at, "dtype");
    value.shape = reader.integers<int64_t>(entry, at, "shape", 0, kMaxBytes);
    if (entry.is_object() && entry.contains("formula")) {
      constexpr const char *kFormulas[] = {"learning_rate", "adam_step_size",
                                           "adam_second_moment_scale", "decoupled_weight_decay"};
      std::string where = Reader::join(at, "formula");
      const Json &formula = entry["formula"];
      int kind = reader.oneOf(formula, where, "kind", kFormulas);
      double parameter = reader.number(formula, where, "parameter");
      value.formula =
          StepScalarFormula{static_cast<StepScalarFormula::Kind>(kind < 0 ? 0 : kind), parameter};
    }
    if (entry.is_object() && entry.contains("random")) {
      std::string where = Reader::join(at, "random");
      const Json &random = entry["random"];
      RandomKeyStream stream;
      stream.seed = reader.unsignedInteger(random, where, "seed");
      stream.stream = reader.unsignedInteger(random, where, "stream");
      stream.streamsPerStep = reader.unsignedInteger(random, where, "streams_per_step");
      stream.atStep = reader.integer(random, where, "at_step", 0, kMaxBytes);
      value.random = stream;
    }
  }
  return values;
}

void readReport(Reader &reader, const Json &json, Program::Report &report) {
  const std::string path = "report";
  if (const Json *uses = reader.array(json, path, "peak_uses"))
    for (size_t i = 0; i < uses->size() && !reader.failed(); ++i) {
      std::string at = Reader::index("report.peak_uses", i);
      report.peakUses.push_back({reader.string((*uses)[i], at, "line"),
                                 reader.string((*uses)[i], at, "example"),
                                 reader.integer((*uses)[i], at, "bytes", 0, kMaxBytes)});
    }
  if (const Json *categories = reader.array(json, path, "peak_categories"))
    for (size_t i = 0; i < categories->size() && !reader.failed(); ++i) {
      std::string at = Reader::index("report.peak_categories", i);
      report.peakCategories.push_back(
          {reader.string((*categories)[i], at, "name"),
           reader.integer((*categories)[i], at, "bytes", 0, kMaxBytes)});
    }
  report.peakWorkspaceBytes = reader.integer(json, path, "peak_workspace_bytes", 0, kMaxBytes);
  report.peakTensorBytes = reader.integer(json, path, "peak_tensor_bytes", 0, kMaxBytes);
  report.recomputedValues = reader.integer(json, path, "recomputed_values", 0, kMaxBytes);
  report.recomputeOperations = reader.integer(json, path, "recompute_operations", 0, kMaxBytes);
  report.pipelineRuns = static_cast<int>(reader.integer(json, path, "pipeline_runs", 0, kMaxIndex));
  report.estimatedArenaBytes = reader.integer(json, path, "estimated_arena_bytes", 0, kMaxBytes);
}

} // namespace

std::string writeProgram(const Program &program) {
  Json buffers = Json::array(), steps = Json::array();
  for (const Program::Buffer &buffer : program.buffers)
    buffers.push_back({{"bytes", buffer.bytes},
                       {"offset", buffer.offset},
                       {"phase", kPhaseNames[buffer.phase]},
                       {"floats", kFloatsNames[static_cast<int>(buffer.floats)]}});
  for (const Program::Step &step : program.steps)
    steps.push_back(stepOf(step));
  std::vector<bool> inArena = program.inArena;
  inArena.resize(program.results.size(), false);
  Json document = {{"format", kProgramFormat},
                   {"version", kProgramFormatVersion},
                   {"library", program.library},
                   {"kernel_prefix", program.kernelPrefix},
                   {"arena_bytes", program.arenaBytes},
                   {"buffers", buffers},
                   {"steps", steps},
                   {"arguments", program.arguments},
                   {"results", program.results},
                   {"donors", program.donors},
                   {"in_arena", inArena},
                   {"signature",
                    {{"arguments", valuesOf(program.signature.arguments)},
                     {"results", valuesOf(program.signature.results)}}},
                   {"report", reportOf(program.report)}};
  return document.dump(1) + "\n";
}

StatusOr<Program> readProgram(std::string_view text, std::string_view originView) {
  const std::string origin(originView);
  Json document;
  try {
    document = Json::parse(text.begin(), text.end());
  } catch (const Json::exception &error) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a JSON document (", parseErrorOf(error), ")"));
  }
  Reader reader(origin);
  if (!document.is_object())
    return absl::InvalidArgumentError(absl::StrCat(origin, ": not a Sinter program (a JSON ",
                                                   document.type_name(), ", not an object)"));
  auto format = document.find("format");
  if (format == document.end() || !format->is_string() || *format != kProgramFormat)
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a Sinter program (its \"format\" is ",
                     format == document.end() ? std::string("missing") : format->dump(),
                     ", expected \"", kProgramFormat, "\")"));
  int64_t version = reader.integer(document, "", "version", 1, kMaxIndex);
  SINTER_RETURN_IF_ERROR(reader.status());
  if (version > kProgramFormatVersion)
    return absl::FailedPreconditionError(absl::StrCat(
        origin, ": format version ", version, " is newer than this Sinter reads (",
        kProgramFormatVersion, "): run it with the Sinter that wrote it, or a newer one"));

  Program program;
  program.library = reader.string(document, "", "library");
  program.kernelPrefix = reader.string(document, "", "kernel_prefix");
  program.arenaBytes = reader.integer(document, "", "arena_bytes", 0, kMaxBytes);
  if (const Json *buffers = reader.array(document, "", "buffers"))
    for (size_t b = 0; b < buffers->size() && !reader.failed(); ++b) {
      std::string at = Reader::index("buffers", b);
      Program::Buffer &buffer = program.buffers.emplace_back();
      buffer.bytes = reader.integer((*buffers)[b], at, "bytes", 0, kMaxBytes);
      buffer.offset = reader.integer((*buffers)[b], at, "offset", -1, kMaxBytes);
      int phase = reader.oneOf((*buffers)[b], at, "phase", kPhaseNames);
      buffer.phase = static_cast<uint8_t>(phase < 0 ? 0 : phase);
      if (version >= 2) {
        int floats = reader.oneOf((*buffers)[b], at, "floats", kFloatsNames);
        buffer.floats = static_cast<Program::Buffer::Floats>(floats < 0 ? 0 : floats);
      } else { // version 1 knew f32 buffers only
        buffer.floats = reader.boolean((*buffers)[b], at, "floating")
                            ? Program::Buffer::Floats::F32
                            : Program::Buffer::Floats::None;
      }
    }
  if (const Json *steps = reader.array(document, "", "steps"))
    for (size_t s = 0; s < steps->size() && !reader.failed(); ++s)
      program.steps.push_back(readStep(reader, (*steps)[s], Reader::index("steps", s)));
  program.arguments = reader.integers<int>(document, "", "arguments", 0, kMaxIndex);
  program.results = reader.integers<int>(document, "", "results", 0, kMaxIndex);
  program.donors = reader.integers<int>(document, "", "donors", -1, kMaxIndex);
  if (const Json *flags = reader.array(document, "", "in_arena"))
    for (size_t r = 0; r < flags->size() && !reader.failed(); ++r) {
      if (!(*flags)[r].is_boolean())
        reader.fail(Reader::index("in_arena", r), "expected true or false");
      else
        program.inArena.push_back((*flags)[r].get<bool>());
    }
  if (const Json *signature = reader.field(document, "", "signature")) {
    program.signature.arguments = readValues(reader, *signature, "signature", "arguments");
    program.signature.results = readValues(reader, *signature, "signature", "results");
  }
  if (const Json *report = reader.field(document, "", "report"))
    readReport(reader, *report, program.report);
  SINTER_RETURN_IF_ERROR(reader.status());
  if (program.signature.arguments.size() != program.arguments.size() ||
      program.signature.results.size() != program.results.size())
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": the signature names ", program.signature.arguments.size(), " arguments and ",
        program.signature.results.size(), " results; the program has ", program.arguments.size(),
        " and ", program.results.size()));
  if (Status valid = validateProgram(program); !valid.ok())
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", std::string(valid.message())));
  return program;
}

StatusOr<Program> readProgramFile(const std::string &path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    return absl::InvalidArgumentError(absl::StrCat(path, " is a folder, not a Sinter program"));
  std::ifstream in(path, std::ios::binary);
  if (!in.good())
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  constexpr std::streamoff kLargest = std::streamoff{1} << 30;
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size > kLargest)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", size, " bytes, more than a Program's 1 GiB"));
  in.seekg(0, std::ios::beg);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return readProgram(text, path);
}

} // namespace sinter::runtime
