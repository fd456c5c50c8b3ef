//===- StepMemoryTest.cpp - a compiled step's memory, planned and measured ===//
//
// Note [Step memory] in sinter/Metrics.h: plan_step() says, before a step
// runs, how many bytes it will allocate while running (its arena and its
// results); the caching allocator measures the same while it runs. For every
// zoo model, over the first step (optimizer state created) and later ones,
// the two are equal to the byte.
//
//===----------------------------------------------------------------------===//
#include "ZooTask.h"

#include "sinter/Compiler/StepCompiler.h"

#include <gtest/gtest.h>

namespace {

using namespace sinter;

TEST(StepMemory, PlannedBeforeRunningEqualsMeasuredForEveryZooModel) {
  compiler::install();
  set_compiler_config({});
  for (const char *model : {"mlp", "lenet", "resnet18", "gpt-mini", "bert-mini"}) {
    SCOPED_TRACE(model);
    tools::ZooTask task = tools::makeZooTask(model, /*batch=*/2, /*length=*/16, /*seed=*/5,
                                             /*imageSize=*/16);
    optim::AdamW optimizer(task.model->parameters(), {.lr = 1e-3});
    for (int step = 0; step < 3; ++step) {
      optimizer.zero_grad();
      task.loss().backward();
      optimizer.step();
      // Planning alone (no kernels built) and compiling give one plan.
      StepMemory quick = plan_step({.build_kernels = false});
      StepMemory planned = plan_step();
      EXPECT_EQ(quick.planned_peak_bytes, planned.planned_peak_bytes);
      EXPECT_EQ(quick.persistent_bytes, planned.persistent_bytes);
      EXPECT_GT(planned.arena_bytes, 0);
      EXPECT_GT(planned.result_bytes, 0);
      EXPECT_EQ(planned.planned_peak_bytes, planned.arena_bytes + planned.result_bytes);
      EXPECT_GT(planned.persistent_bytes, 0);
      EXPECT_EQ(planned.measured_peak_bytes, -1) << "planned, not run";
      mark_step();
      StepMemory ran = metrics().last_step_memory;
      EXPECT_EQ(ran.planned_peak_bytes, planned.planned_peak_bytes) << "step " << step;
      EXPECT_EQ(ran.measured_peak_bytes, planned.planned_peak_bytes) << "step " << step;
      EXPECT_EQ(ran.persistent_bytes, planned.persistent_bytes) << "step " << step;
    }
  }
}

TEST(StepMemory, NothingPendingPlansNothing) {
  compiler::install();
  mark_step();
  StepMemory planned = plan_step();
  EXPECT_EQ(planned.planned_peak_bytes, 0);
  EXPECT_EQ(planned.persistent_bytes, 0);
}

} // namespace
