//===- ProgramFileTest.cpp - the Program as a file, and what it refuses ---===//
//
// A Program with every kind of step, written and read back, is the same
// Program; a document damaged in exactly one place is refused with a
// message that names the file and the place (Note [The Program as a file]).
// Compiled steps of the zoo go through the file in CompiledStepTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "sinter/runtime/ProgramFile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

namespace sinter::runtime {
namespace {

using Json = nlohmann::json;
using Kind = Program::Step::Kind;
using enum Program::Buffer::Floats;

/// x [4x2] f32, a parameter w [2x2] and a step scalar: a product into the
/// arena, a kernel reading it with a constant (filled first), the
/// parameter's update donated, x returned as is (copied).
Program everyKindOfStep() {
  Program program;
  program.buffers = {{32, -1, 0, F32}, {16, -1, 0, F32}, {32, 0, 0, F32},    {32, 64, 1, F32},
                     {4, 128, 0, F32}, {16, -1, 2, F32}, {64, 192, 1, None}, {4, -1, 2, F32},
                     {32, 96, 1, F32}, {32, 224, 1, F32}};
  program.arguments = {0, 1, 7};
  program.results = {3, 5, 0};
  program.donors = {-1, 1, -1};
  program.inArena = {true, false, false};
  program.arenaBytes = 256;
  program.library = "kernels.so";
  program.kernelPrefix = "sinter_kernel_";
  Program::Step gemm;
  gemm.kind = Kind::Gemm;
  gemm.kernel = 0;
  gemm.gemm = gemmOfRowMajor(false, false, 4, 2, 2, 1, false);
  gemm.host = {.openBlas = true, .oneThread = true};
  gemm.inputs = {1, 0};
  gemm.outputs = {2};
  gemm.results = 1;
  gemm.label = "matmul f32[4x2] <- model.cpp:40";
  gemm.lines = "model.cpp:40";
  Program::Step reduce;
  reduce.kind = Kind::AllReduce;
  reduce.inputs = {2};
  reduce.outputs = {8};
  reduce.results = 1;
  reduce.reduce = ReduceOp::Mean;
  reduce.elementType = ElementType::F32;
  reduce.phase = Program::Step::Phase::Backward;
  reduce.label = "all_reduce f32[4x2] <- model.cpp:40";
  reduce.lines = "model.cpp:40";
  Program::Step done = reduce;
  done.kind = Kind::AllReduceDone;
  done.inputs = {8};
  done.outputs = {9};
  Program::Step fill;
  fill.kind = Kind::Fill;
  fill.outputs = {4};
  fill.element = {0x00, 0x00, 0x80, 0x3f};
  Program::Step kernel;
  kernel.kernel = 1;
  kernel.inputs = {2, 4, 1};
  kernel.inputOffsets = {0, 0, 8};
  kernel.outputs = {3, 5, 6};
  kernel.results = 2;
  kernel.phase = Program::Step::Phase::Update;
  kernel.label = "fusion(mul,add) f32[4x2] <- model.cpp:41";
  kernel.lines = "model.cpp:41, model.cpp:42";
  kernel.shape = {{8, 1, 1}, {128, 1, 1}, 1024};
  Program::Step copy;
  copy.kind = Kind::Copy;
  copy.inputs = {0};
  copy.result = 2;
  program.steps = {gemm, fill, kernel, reduce, done, copy};
  using Role = Program::Role;
  program.signature.arguments = {{"input", Role::BatchInput, "f32", {4, 2}},
                                 {"w", Role::Parameter, "f32", {2, 2}},
                                 {"step_size",
                                  Role::StepScalar,
                                  "f32",
                                  {},
                                  StepScalarFormula{StepScalarFormula::Kind::AdamStepSize, 0.9}}};
  program.signature.results = {{"y", Role::Output, "f32", {4, 2}},
                               {"w_new", Role::Output, "f32", {2, 2}},
                               {"input_again", Role::Output, "f32", {4, 2}}};
  program.report.peakUses = {{"model.cpp:40", "matmul f32[4x2]", 96}};
  program.report.peakCategories = {{"parameters", 64}, {"temporaries", 32}};
  program.report.peakWorkspaceBytes = 64;
  program.report.peakTensorBytes = 68;
  program.report.recomputedValues = 2;
  program.report.recomputeOperations = 300;
  program.report.pipelineRuns = 3;
  program.report.estimatedArenaBytes = 256;
  return program;
}

TEST(ProgramFile, AProgramWithEveryKindOfStepReadsBackTheSame) {
  Program program = everyKindOfStep();
  ASSERT_TRUE(validateProgram(program).ok()) << validateProgram(program);
  std::string text = writeProgram(program);
  StatusOr<Program> read = readProgram(text, "step.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, program);
  // The writer is a function of the Program: written again, the same bytes.
  EXPECT_EQ(writeProgram(*read), text);
  Json document = Json::parse(text);
  EXPECT_EQ(document["format"], "sinter-program");
  EXPECT_EQ(document["version"], kProgramFormatVersion);
  EXPECT_EQ(document["steps"][1]["element"], "0000803f");
  EXPECT_EQ(document["steps"][3]["kind"], "all_reduce");
  EXPECT_EQ(document["steps"][3]["reduce"], "mean");
  EXPECT_EQ(document["steps"][3]["dtype"], "f32");
  EXPECT_EQ(document["steps"][4]["kind"], "all_reduce_done");
  EXPECT_EQ(document["signature"]["arguments"][1]["role"], "parameter");
  EXPECT_EQ(document["signature"]["arguments"][2]["formula"]["kind"], "adam_step_size");
  EXPECT_EQ(document["signature"]["arguments"][2]["formula"]["parameter"], 0.9);
}

// A product allowed TF32 (Gemm::tf32) keeps the mark through its file; a
// product without it writes nothing, so files of f32 products read as
// before.
TEST(ProgramFile, AProductsTf32MarkReadsBackAndIsWrittenOnlyWhereSet) {
  Program program = everyKindOfStep();
  auto gemm = std::find_if(program.steps.begin(), program.steps.end(),
                           [](const Program::Step &step) { return step.kind == Kind::Gemm; });
  ASSERT_NE(gemm, program.steps.end());
  const size_t g = static_cast<size_t>(gemm - program.steps.begin());
  EXPECT_FALSE(Json::parse(writeProgram(program))["steps"][g]["gemm"].contains("tf32"));
  program.steps[g].gemm.tf32 = true;
  std::string text = writeProgram(program);
  Json document = Json::parse(text);
  EXPECT_EQ(document["steps"][g]["gemm"]["tf32"], true);
  StatusOr<Program> read = readProgram(text, "step.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->steps[g].gemm.tf32);
  EXPECT_EQ(*read, program);
  document["steps"][g]["gemm"]["tf32"] = 1;
  StatusOr<Program> refused = readProgram(document.dump(), "step.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("tf32"), std::string::npos)
      << refused.status();
}

TEST(ProgramFile, HalfBuffersAndVersionOneFilesReadBack) {
  // Version 2 names each buffer's floats; version 1 said "floating" for f32
  // buffers and is still read.
  Program program = everyKindOfStep();
  program.buffers[8].floats = BF16;
  program.buffers[9].floats = F16;
  std::string text = writeProgram(program);
  Json document = Json::parse(text);
  EXPECT_EQ(document["buffers"][8]["floats"], "bf16");
  EXPECT_EQ(document["buffers"][6]["floats"], "none");
  StatusOr<Program> read = readProgram(text, "half.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, program);

  document["version"] = 1;
  for (Json &buffer : document["buffers"]) {
    buffer["floating"] = buffer["floats"] != "none";
    buffer.erase("floats");
  }
  read = readProgram(document.dump(), "v1.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->buffers[0].floats, F32);
  EXPECT_EQ(read->buffers[6].floats, None);
  EXPECT_EQ(read->buffers[8].floats, F32); // version 1 could only say f32

  document = Json::parse(text);
  document["buffers"][2]["floats"] = "f64";
  read = readProgram(document.dump(), "bad.json");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(
      read.status().message().find("buffers[2].floats: \"f64\" is not one of none, f32, f16, bf16"),
      std::string::npos)
      << read.status();
}

TEST(ProgramFile, AFileIsReadFromItsPath) {
  std::string path = testing::TempDir() + "/program-" + std::to_string(getpid()) + ".json";
  {
    std::ofstream out(path);
    out << writeProgram(everyKindOfStep());
  }
  StatusOr<Program> read = readProgramFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, everyKindOfStep());
  std::remove(path.c_str());
  StatusOr<Program> missing = readProgramFile(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open " + path), std::string::npos)
      << missing.status();
  StatusOr<Program> folder = readProgramFile(testing::TempDir());
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("is a folder"), std::string::npos) << folder.status();
}

/// One damage to the document of everyKindOfStep, and the words its refusal
/// must hold.
struct Damage {
  const char *what;
  std::function<void(Json &)> damage;
  const char *message;
};

TEST(ProgramFile, EachDamageIsRefusedWithItsPlace) {
  const std::vector<Damage> damages = {
      {"another format", [](Json &j) { j["format"] = "onnx"; },
       "not a Sinter program (its \"format\" is \"onnx\", expected \"sinter-program\")"},
      {"no format", [](Json &j) { j.erase("format"); }, "its \"format\" is missing"},
      {"a newer version", [](Json &j) { j["version"] = 3; },
       "format version 3 is newer than this Sinter reads (2)"},
      {"version zero", [](Json &j) { j["version"] = 0; }, "version: 0 is outside 1.."},
      {"version as text", [](Json &j) { j["version"] = "1"; },
       "version: expected an integer, got string \"1\""},
      {"no steps", [](Json &j) { j.erase("steps"); }, "the document has no \"steps\""},
      {"steps not a list", [](Json &j) { j["steps"] = 3; }, "steps: expected a list, got number 3"},
      {"an unknown step kind", [](Json &j) { j["steps"][2]["kind"] = "jump"; },
       "steps[2].kind: \"jump\" is not one of kernel, gemm, fill, copy, all_reduce, "
       "all_reduce_done, reduce_scatter, all_gather"},
      {"an input past the buffers", [](Json &j) { j["steps"][2]["inputs"][1] = 10; },
       "step 2 names buffer 10 of 10"},
      {"a negative input", [](Json &j) { j["steps"][2]["inputs"][1] = -1; },
       "steps[2].inputs[1]: -1 is outside 0.."},
      {"a fractional size", [](Json &j) { j["buffers"][3]["bytes"] = 32.5; },
       "buffers[3].bytes: expected an integer, got number 32.5"},
      {"a size past int64", [](Json &j) { j["buffers"][3]["bytes"] = 18446744073709551615ull; },
       "buffers[3].bytes: 18446744073709551615 is outside 0.."},
      {"a buffer past the arena", [](Json &j) { j["buffers"][6]["offset"] = 250; },
       "buffer 6 of the program has no place: offset 250, 64 bytes, arena of 256"},
      {"a kernel number past the most", [](Json &j) { j["steps"][2]["kernel"] = 1 << 30; },
       "steps[2].kernel: 1073741824 is outside 0..1048575"},
      {"a fill of no element", [](Json &j) { j["steps"][1]["element"] = ""; },
       "fill step 1 repeats an element of 0 bytes over 4"},
      {"a fill element not in hex", [](Json &j) { j["steps"][1]["element"] = "zz00803f"; },
       "steps[1].element: \"zz00803f\" is not lowercase hex"},
      {"a fill element that does not divide its buffer",
       [](Json &j) { j["steps"][1]["element"] = "000080"; },
       "fill step 1 repeats an element of 3 bytes over 4"},
      {"a copy of another buffer", [](Json &j) { j["steps"][5]["inputs"][0] = 1; },
       "copy step 5 copies buffer 1 into result 2, which is not that buffer"},
      {"a launch after a copy",
       [](Json &j) {
         Json copy = j["steps"][5];
         j["steps"][5] = j["steps"][2];
         j["steps"][2] = copy;
       },
       "step 3 reduces after a copy of a result"},
      {"an all-reduce into a bucket of another size",
       [](Json &j) { j["steps"][3]["outputs"][0] = 4; },
       "all-reduce step 3's bucket has 4 bytes, its tensors 32"},
      {"an all-reduce with no bucket", [](Json &j) { j["steps"][3]["outputs"] = Json::array(); },
       "all-reduce step 3 has 1 inputs, 0 outputs and 0 results (tensors and one bucket, every "
       "output a result)"},
      {"an all-reduce of an odd number of bytes",
       [](Json &j) {
         j["steps"][3]["dtype"] = "i64";
         j["steps"][4]["dtype"] = "i64";
         j["buffers"][4]["bytes"] = 4;
         j["steps"][3]["inputs"][0] = 4;
       },
       "all-reduce step 3 reduces a buffer of 4 bytes (i64 elements of 8 bytes)"},
      {"a done of a bucket nothing started", [](Json &j) { j["steps"][4]["inputs"][0] = 2; },
       "all-reduce done step 4 waits for buffer 2, which no all-reduce step before it started"},
      {"a done of another reduction", [](Json &j) { j["steps"][4]["reduce"] = "max"; },
       "all-reduce done step 4 waits for step 3, which reduces otherwise"},
      {"an all-reduce never waited for", [](Json &j) { j["steps"].erase(4); },
       "all-reduce step 3 is never waited for (no all-reduce done step reads buffer 8)"},
      {"an unknown reduction", [](Json &j) { j["steps"][3]["reduce"] = "product"; },
       "steps[3].reduce: unknown reduction 'product': expected sum, mean, max or min"},
      {"a donor past the arguments", [](Json &j) { j["donors"][1] = 3; },
       "result 1 is donated argument 3 of 3"},
      {"one arena flag too few", [](Json &j) { j["in_arena"].erase(2); },
       "the program has 3 results but 2 arena flags and 3 donors"},
      {"an unknown role", [](Json &j) { j["signature"]["arguments"][0]["role"] = "weights"; },
       "signature.arguments[0].role: \"weights\" is not one of parameter, optimizer_state, "
       "batch_input, step_scalar, random_key, output"},
      {"a result with an argument's role",
       [](Json &j) { j["signature"]["results"][0]["role"] = "parameter"; },
       "result 0 ('y') has the role parameter, not output"},
      {"an unknown dtype", [](Json &j) { j["signature"]["arguments"][0]["dtype"] = "f8"; },
       "argument 0 ('input') has dtype 'f8', not one of f32, f16, bf16, i32, i64, bool"},
      {"a shape of other bytes",
       [](Json &j) {
         j["signature"]["arguments"][1]["shape"] = {2, 3};
       },
       "argument 1 ('w') is f32[2x3], 24 bytes, but its buffer 1 holds 16"},
      {"a shape whose size overflows",
       [](Json &j) {
         j["signature"]["arguments"][1]["shape"] = {4294967296ll, 4294967296ll};
       },
       "argument 1 ('w') has a shape whose byte count overflows"},
      {"two arguments of one name",
       [](Json &j) { j["signature"]["arguments"][1]["name"] = "input"; },
       "two arguments are named 'input'"},
      {"a signature short of a result", [](Json &j) { j["signature"]["results"].erase(2); },
       "the signature names 3 arguments and 2 results; the program has 3 and 3"},
      {"a step scalar without its formula",
       [](Json &j) { j["signature"]["arguments"][2].erase("formula"); },
       "argument 2 ('step_size') is a step_scalar without a formula"},
      {"a formula on a batch input",
       [](Json &j) {
         j["signature"]["arguments"][0]["formula"] = j["signature"]["arguments"][2]["formula"];
       },
       "argument 0 ('input') is a batch_input with a formula"},
      {"an unknown formula",
       [](Json &j) { j["signature"]["arguments"][2]["formula"]["kind"] = "lamb_trust_ratio"; },
       "signature.arguments[2].formula.kind: \"lamb_trust_ratio\" is not one of learning_rate, "
       "adam_step_size, adam_second_moment_scale, decoupled_weight_decay"},
      {"a step scalar that is no scalar",
       [](Json &j) { j["signature"]["arguments"][2]["shape"] = {1}; },
       "step scalar 2 ('step_size') is f32[1], not a floating-point scalar"},
      {"an empty grid",
       [](Json &j) {
         j["steps"][2]["shape"]["grid"] = {0, 1, 1};
       },
       "steps[2].shape.grid[0]: 0 is outside 1.."},
      {"a grid of two sizes",
       [](Json &j) {
         j["steps"][2]["shape"]["grid"] = {8, 1};
       },
       "steps[2].shape.grid: has 2 sizes, not 3"},
      {"a gemm that reads past its operand", [](Json &j) { j["steps"][0]["gemm"]["n"] = 8; },
       "step 0 (gemm N,N m=2 n=8 k=2"},
      {"a product of more than 2^31 rows", [](Json &j) { j["steps"][0]["gemm"]["m"] = 1ll << 40; },
       "a size or stride over 2^31 - 1 in gemm N,N m=1099511627776"},
      {"an argument in the arena", [](Json &j) { j["buffers"][0]["offset"] = 0; },
       "argument 0 has an arena offset"},
      {"a donation of other bytes", [](Json &j) { j["donors"][2] = 1; },
       "result 2 (32 bytes) cannot be written into argument 1 (16 bytes)"},
      {"an arena past 2^48", [](Json &j) { j["arena_bytes"] = 1ll << 50; },
       "arena_bytes: 1125899906842624 is outside 0..281474976710656"},
      {"an infinite alpha", [](Json &j) { j["steps"][0]["gemm"]["alpha"] = 1e300; },
       "steps[0].gemm.alpha: 1e+300 is not a finite float"},
      {"a report of the wrong shape", [](Json &j) { j["report"]["peak_uses"] = {1}; },
       "report.peak_uses[0]: expected an object, got number"},
  };
  const std::string text = writeProgram(everyKindOfStep());
  for (const Damage &d : damages) {
    Json document = Json::parse(text);
    d.damage(document);
    StatusOr<Program> read = readProgram(document.dump(), "step.json");
    ASSERT_FALSE(read.ok()) << d.what << " was read";
    std::string message(read.status().message());
    EXPECT_EQ(message.rfind("step.json: ", 0), 0u) << d.what << ": " << message;
    EXPECT_NE(message.find(d.message), std::string::npos)
        << d.what << ": expected \"" << d.message << "\" in\n  " << message;
  }
}

TEST(ProgramFile, BytesThatAreNoJsonObjectAreRefused) {
  for (const auto &[bytes, words] : std::vector<std::pair<std::string, std::string>>{
           {"", "not a JSON document"},
           {"{\"format\": \"sinter-program\", ", "not a JSON document"},
           {std::string("\xff\xfe\x00\x01", 4), "not a JSON document"},
           {"[1, 2, 3]", "not a Sinter program (a JSON array, not an object)"},
           {"\"sinter-program\"", "not a Sinter program (a JSON string, not an object)"},
           {std::string(100000, '['), "not a JSON document"},
       }) {
    StatusOr<Program> read = readProgram(bytes, "bad.json");
    ASSERT_FALSE(read.ok()) << bytes.substr(0, 40);
    EXPECT_NE(read.status().message().find("bad.json: " + words), std::string::npos)
        << read.status();
  }
}

/// A sharded optimizer's collectives over 2 ranks: 8 floats reduce-scattered
/// into 4 (read at byte 0 of the gradient), 4 all-gathered into 8.
Program shardedCollectives() {
  Program program;
  program.buffers = {{32, -1, 0, F32}, {16, 0, 1, F32}, {32, -1, 2, F32}};
  program.arguments = {0};
  program.results = {2};
  program.donors = {-1};
  program.inArena = {false};
  program.arenaBytes = 64;
  Program::Step scatter;
  scatter.kind = Kind::ReduceScatter;
  scatter.ranks = 2;
  scatter.reduce = ReduceOp::Mean;
  scatter.inputs = {0};
  scatter.inputOffsets = {0};
  scatter.outputs = {1};
  scatter.results = 1;
  scatter.phase = Program::Step::Phase::Update;
  scatter.label = "reduce_scatter f32[8] <- optim.cpp:7";
  Program::Step gather = scatter;
  gather.kind = Kind::AllGather;
  gather.reduce = ReduceOp::Sum;
  gather.inputs = {1};
  gather.outputs = {2};
  gather.label = "all_gather f32[4] <- optim.cpp:9";
  program.steps = {scatter, gather};
  using Role = Program::Role;
  program.signature.arguments = {{"grad", Role::BatchInput, "f32", {8}}};
  program.signature.results = {{"w", Role::Output, "f32", {8}}};
  return program;
}

TEST(ProgramFile, ShardedCollectivesReadBackAndTheirSizesAreChecked) {
  Program program = shardedCollectives();
  ASSERT_TRUE(validateProgram(program).ok()) << validateProgram(program);
  std::string text = writeProgram(program);
  StatusOr<Program> read = readProgram(text, "zero.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, program);
  Json document = Json::parse(text);
  EXPECT_EQ(document["steps"][0]["kind"], "reduce_scatter");
  EXPECT_EQ(document["steps"][0]["ranks"], 2);
  EXPECT_EQ(document["steps"][1]["kind"], "all_gather");
  EXPECT_FALSE(document["steps"][1].contains("reduce")) << "an all-gather reduces nothing";
  const std::vector<Damage> damages = {
      {"no ranks", [](Json &j) { j["steps"][0]["ranks"] = 0; }, "steps[0].ranks: 0 is outside 1.."},
      {"a world the sizes do not fit", [](Json &j) { j["steps"][0]["ranks"] = 4; },
       "reduce-scatter step 0 writes 16 bytes from 32 bytes of its input at byte 0 in a world of "
       "4"},
      {"a gather into too little", [](Json &j) { j["steps"][1]["ranks"] = 3; },
       "all-gather step 1 writes 32 bytes"},
      {"an input offset past the slices", [](Json &j) { j["steps"][0]["input_offsets"] = {8}; },
       "reduce-scatter step 0 writes 16 bytes from 24 bytes of its input at byte 8"},
      {"two outputs",
       [](Json &j) {
         j["steps"][1]["outputs"] = {2, 1};
       },
       "all-gather step 1 has 1 inputs, 2 outputs"},
      {"an unknown dtype", [](Json &j) { j["steps"][1]["dtype"] = "f8"; },
       "steps[1].dtype: collectives do not take elements of type 'f8'"},
  };
  for (const Damage &d : damages) {
    Json damaged = Json::parse(text);
    d.damage(damaged);
    StatusOr<Program> bad = readProgram(damaged.dump(), "zero.json");
    ASSERT_FALSE(bad.ok()) << d.what << " was read";
    EXPECT_NE(bad.status().message().find(d.message), std::string::npos)
        << d.what << ": expected \"" << d.message << "\" in\n  " << bad.status().message();
  }
}

TEST(ProgramFile, AProgramWithoutNamesIsWholeButNotAFile) {
  // A Program built by hand (tests, eager one-op programs) may have no
  // signature; a file must name every argument and result.
  Program program = everyKindOfStep();
  program.signature = {};
  EXPECT_TRUE(validateProgram(program).ok()) << validateProgram(program);
  StatusOr<Program> read = readProgram(writeProgram(program), "unnamed.json");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("the signature names 0 arguments and 0 results"),
            std::string::npos)
      << read.status();
}

} // namespace
} // namespace sinter::runtime
