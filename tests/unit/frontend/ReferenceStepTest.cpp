//===- ReferenceStepTest.cpp - a reference step frees what it no longer needs -===//
//
// detail::evaluateStep computes a step's outputs in one pass and drops the
// value of an intermediate once its last consumer has run, unless something
// outside the step holds it (Note [The reference step frees what it no
// longer needs]). These tests call it on graphs they keep alive through the
// outputs, so that the intermediates can be looked at afterwards.
//
//===----------------------------------------------------------------------===//
#include "TensorImpl.h"
#include "sinter/sinter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sinter {
namespace {

using ::testing::ElementsAre;

const lazy::NodePtr &nodeOf(const Tensor &t) { return t.impl()->node; }

/// The node's elements; none when it holds no value.
std::vector<double> valueOf(const lazy::NodePtr &node) {
  return node->value ? node->value->elements() : std::vector<double>{};
}

TEST(ReferenceStep, FreesAnIntermediateAfterItsLastConsumer) {
  Tensor x = from_vector<float>({1, 2, 3}, {3});
  lazy::NodePtr out;
  {
    Tensor doubled = x * 2.0; // consumed twice by one op, then by the sum
    Tensor squared = doubled * doubled;
    out = nodeOf((squared + doubled).sum());
  }
  // out = sum(4x^2 + 2x); its operands are squared+doubled, then squared and doubled.
  detail::evaluateStep({out});
  ASSERT_TRUE(out->value);
  EXPECT_THAT(valueOf(out), ElementsAre(4 * (1 + 4 + 9) + 2 * (1 + 2 + 3)));
  const lazy::NodePtr &added = out->operands[0];
  EXPECT_FALSE(added->value);
  EXPECT_FALSE(added->operands[0]->value); // squared
  EXPECT_FALSE(added->operands[1]->value); // doubled
  EXPECT_TRUE(nodeOf(x)->value);           // data is never freed
}

TEST(ReferenceStep, KeepsWhatIsHeldOutsideTheStep) {
  Tensor x = from_vector<float>({1, 2, 3}, {3});
  Tensor held = x + 1.0; // a tensor the user keeps
  lazy::NodePtr out, first, otherGraph;
  {
    Tensor doubled = held * 2.0;
    first = nodeOf(doubled.sum());
    Tensor tripled = doubled * 1.5; // shared by the two outputs
    out = nodeOf(tripled.sum());
  }
  lazy::NodePtr doubled = first->operands[0];
  EXPECT_FALSE(doubled->value);
  detail::evaluateStep({first, out, nodeOf(held)});
  EXPECT_THAT(valueOf(first), ElementsAre(2 * (2 + 3 + 4)));
  EXPECT_THAT(valueOf(out), ElementsAre(3 * (2 + 3 + 4)));
  EXPECT_THAT(valueOf(nodeOf(held)), ElementsAre(2, 3, 4)); // an output: kept
  // The test holds it: kept.
  EXPECT_TRUE(doubled->value);
  EXPECT_THAT(valueOf(doubled), ElementsAre(4, 6, 8));
  EXPECT_FALSE(out->operands[0]->value); // tripled: only the sum held it
}

/// The loss and gradient of one small step, read tensor by tensor
/// (`stepAtOnce` false) or computed by mark_step first.
std::pair<std::vector<float>, std::vector<float>> smallStep(bool stepAtOnce) {
  Tensor w = from_vector<float>({0.5, -1, 2, 0.25}, {2, 2}).requires_grad_();
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor h = x.matmul(w);
  Tensor loss = (h.tanh() * h + h.exp()).mean();
  loss.backward();
  if (stepAtOnce)
    mark_step();
  return {loss.to_vector<float>(), w.grad().to_vector<float>()};
}

TEST(ReferenceStep, MarkStepGivesWhatReadingEachTensorGives) {
  Settings settings = Session::current().settings();
  settings.compiler.use_reference = true;
  Session::Use session(settings);
  auto [lossRead, gradRead] = smallStep(false);
  auto [lossStep, gradStep] = smallStep(true);
  EXPECT_EQ(lossStep, lossRead);
  EXPECT_EQ(gradStep, gradRead);
  EXPECT_EQ(gradStep.size(), 4u);
}

} // namespace
} // namespace sinter
