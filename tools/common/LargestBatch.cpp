//===- LargestBatch.cpp - the largest batch whose plan fits --------------===//
#include "LargestBatch.h"

#include "sinter/Error.h"
#include "sinter/runtime/Allocator.h"

#include <cstdio>

namespace sinter::tools {

void enterSteadyState(optim::Adam &optimizer) {
  optim::Optimizer::State state;
  for (size_t i = 0; i < optimizer.params().size(); ++i) {
    const Tensor &p = optimizer.params()[i];
    std::string index = std::to_string(i);
    state.emplace_back(index + ".step", from_vector<int64_t>({1}, {}));
    state.emplace_back(index + ".exp_avg", zeros(p.shape(), p.dtype()));
    state.emplace_back(index + ".exp_avg_sq", zeros(p.shape(), p.dtype()));
  }
  optimizer.load_state_dict(state);
  mark_step();
}

/// Note [The largest batch that fits]
/// A batch size of auto plans the steady step (the second and every later
/// step: parameters and optimizer state are inputs, updated in place; see
/// enterSteadyState) at growing batch sizes (doubling,
/// then bisecting) and keeps the largest whose planned memory fits: with
/// a memory budget, the bytes the step allocates beyond its inputs (its
/// arena and results); without, the step and its inputs within the memory
/// the system has available. Only plans are made (no kernel is built, no
/// step runs, nothing is allocated for activations), so it takes seconds.
int64_t largestBatch(const std::function<StepMemory(int64_t)> &plan, int64_t memoryBudget,
                     const std::string &what) {
  bool hasBudget = memoryBudget > 0;
  int64_t budget = hasBudget ? memoryBudget : runtime::HostAllocator::system_available();
  auto need = [&](const StepMemory &m) {
    return hasBudget ? m.planned_peak_bytes : m.planned_peak_bytes + m.persistent_bytes;
  };
  constexpr int64_t kMaxBatch = 1 << 16;
  int64_t fits = 0, fails = 0;
  StepMemory atFit, atFail;
  for (int64_t b = 1; b <= kMaxBatch; b *= 2) {
    StepMemory m = plan(b);
    if (need(m) > budget) {
      fails = b, atFail = m;
      break;
    }
    fits = b, atFit = m;
  }
  SINTER_CHECK(fits > 0, Loc::current(),
               what + ": even a batch of 1 needs " + std::to_string(need(atFail)) +
                   " bytes, more than the " + (hasBudget ? "budget of " : "available ") +
                   std::to_string(budget) + " bytes");
  while (fails != 0 && fails - fits > 1) {
    int64_t mid = fits + (fails - fits) / 2;
    StepMemory m = plan(mid);
    if (need(m) > budget)
      fails = mid, atFail = m;
    else
      fits = mid, atFit = m;
  }
  std::printf("%s: %lld (needs %.1f MiB of the %s %.1f MiB", what.c_str(),
              static_cast<long long>(fits), need(atFit) / 1048576.0,
              hasBudget ? "budget of" : "available", budget / 1048576.0);
  if (fails != 0)
    std::printf("; %lld would need %.1f MiB", static_cast<long long>(fails),
                need(atFail) / 1048576.0);
  std::printf(")\n");
  return fits;
}

} // namespace sinter::tools
