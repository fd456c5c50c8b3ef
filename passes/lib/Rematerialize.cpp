//===- Rematerialize.cpp - recompute kept values instead of storing them --===//
//
// Note [Rematerialization]
// A forward value the backward pass reads much later (a GELU's output, read
// again by the weight gradient's matmul) holds its bytes across the step's
// peak. A fusion is cheap to run again: it streams its inputs once. So a
// fusion result live at the peak only for a use after it is recomputed
// there: the fusion is cloned just before that use, which reads the clone
// (and so does every later reader; a view's late readers get a view of the
// clone), and the original dies at its last use before the peak. What it
// costs: the clone's operands must still be there, so an operand whose life
// grows holds its bytes longer. Each trade is simulated on the whole order
// (the bytes live at every kernel, Note [Scheduling for memory]) and made
// only if it lowers the bytes live at the peak without raising the peak;
// the best such trade goes first (without a budget, the one that lowers
// the bytes at the peak the most; over one, Note [Two ways to trade]),
// then the next at the new peak.
//
// Pointwise fusions are always recomputed so (an activation such as GELU's,
// a copy or slice of a weight), as torch.compile's min-cut partitioner
// recomputes pointwise ops by default: fewer bytes, a little more
// arithmetic; so is a fusion's result that a new pointwise fusion computes
// from the fusion's other results (Note [Recomputed from its siblings]).
// With `budget` (bytes of the arena: what the kernels write, results
// included, Note [Results in the arena]) and the peak still over it, any
// fusion may be (layer norms, softmaxes), and so may a matmul's or a
// convolution's result (an MLP's first projection, kept for its activation's
// gradient, recomputed from the layer-norm output the weight gradient keeps
// anyway; a convolution's output, kept for its batch norm's gradient, from
// the input its filter gradient keeps) and the matmuls and convolutions in a
// chain that feeds one, until the simulated peak fits or nothing is left to
// trade, as XLA's rematerialization does under a memory limit. Never
// recomputed: other library calls, values under `min-bytes` (not worth a
// launch), and anything that would read an argument later than the step does
// (it could no longer be donated, Note [Donation]). Each trade is a remark:
// the value, the bytes it saves at the peak and the extra arithmetic (an
// operation per element of each op it runs again; 2 M N K for a matmul; 2
// per output element and filter tap for a convolution).
//
//===----------------------------------------------------------------------===//
#include "Dataflow.h"

#include "sinter/Passes/FusionPolicy.h"
#include "sinter/Passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>

namespace sinter {
#define GEN_PASS_DEF_SINTERREMATERIALIZE
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using sinter::ir::FusionOp;

namespace {

/// The extra arithmetic of running fusion body ops `ops` again: an
/// operation per element of every elementwise op and reduction.
int64_t operationsOf(llvm::ArrayRef<Operation *> ops) {
  int64_t operations = 0;
  for (Operation *inner : ops) {
    sinter::fusion::Role role = sinter::fusion::roleOf(inner);
    if (role == sinter::fusion::Role::Elementwise)
      operations += cast<ShapedType>(inner->getResult(0).getType()).getNumElements();
    else if (role == sinter::fusion::Role::Reduction)
      operations += cast<ShapedType>(inner->getOperand(0).getType()).getNumElements();
  }
  return operations;
}

/// The extra arithmetic of running `op` again for `results`: for a fusion,
/// an operation per element of every elementwise op and reduction they are
/// computed from; for a matmul, a multiply-add per product term (2 M N K);
/// for a convolution, one per output element and filter tap of its group.
int64_t operationsOf(Operation *op, llvm::ArrayRef<unsigned> results) {
  if (auto conv = dyn_cast<sinter::ir::Conv2dOp>(op)) {
    llvm::ArrayRef<int64_t> filter = cast<ShapedType>(conv.getFilter().getType()).getShape();
    return 2 * cast<ShapedType>(conv.getResult().getType()).getNumElements() * filter[1] *
           filter[2] * filter[3];
  }
  if (auto matmul = dyn_cast<sinter::ir::MatmulOp>(op)) {
    auto lhs = cast<ShapedType>(matmul.getLhs().getType());
    int64_t contracted =
        matmul.getTransposeLhs() ? lhs.getShape()[lhs.getRank() - 2] : lhs.getShape().back();
    return 2 * cast<ShapedType>(matmul.getResult().getType()).getNumElements() * contracted;
  }
  // The ops the wanted results are computed from.
  Operation *yield = cast<FusionOp>(op).getBody().front().getTerminator();
  llvm::SmallPtrSet<Operation *, 32> used;
  llvm::SmallVector<Value> work;
  for (unsigned r : results)
    work.push_back(yield->getOperand(r));
  while (!work.empty())
    if (Operation *def = work.pop_back_val().getDefiningOp(); def && used.insert(def).second)
      llvm::append_range(work, def->getOperands());
  return operationsOf(llvm::to_vector(used));
}

/// Whether `fusion` reduces (a row sum, a softmax): dearer to run again
/// than a pointwise fusion, which reads each input element once.
bool hasReduction(FusionOp fusion) {
  return llvm::any_of(fusion.getBody().front().without_terminator(), [](Operation &op) {
    return sinter::fusion::roleOf(&op) == sinter::fusion::Role::Reduction;
  });
}

/// The operands (indices) `op` reads to compute its result `result`: for
/// a fusion, the inputs that result's computation reaches; else all.
llvm::SmallVector<unsigned> neededOperands(Operation *op, unsigned result) {
  llvm::SmallVector<unsigned> needed;
  auto fusion = dyn_cast<FusionOp>(op);
  if (!fusion) {
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      needed.push_back(i);
    return needed;
  }
  Block &body = fusion.getBody().front();
  llvm::SmallVector<Value> work = {body.getTerminator()->getOperand(result)};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      needed.push_back(arg.getArgNumber());
      continue;
    }
    for (Value operand : value.getDefiningOp()->getOperands())
      work.push_back(operand);
  }
  llvm::sort(needed);
  return needed;
}

/// Note [Recomputed from its siblings]
/// A layer norm's output, read again by its weight gradient's matmul in the
/// backward pass, cannot be recomputed by running its fusion again: that
/// reads the residual stream before the norm, gone by then, and keeping it
/// instead saves nothing. But the fusion stores the centered input and
/// 1/sigma for the norm's own backward, and the output is a few pointwise
/// ops from those (times the weight, plus the bias). So a fusion result may
/// also be recomputed by a new fusion that runs only the ops between it and
/// the fusion's other results (and inputs), when no reduction is among
/// them: a pointwise kernel, traded as such, with or without a budget.
/// gpt-mini's step: 79.1 -> 71.1 MiB, bert-mini's 64.0 -> 56.0, nine and
/// eight layer norms' outputs. Under a budget such a trade can cost more
/// than it saves: the MLP's first projection, recomputed for its
/// activation's gradient from the norm's output that its weight gradient
/// kept, finds that output gone, and gpt-mini's largest batch within 256
/// MiB fell from 52 to 43. So a budget's trades also start from the
/// function with pointwise trades made without these, and the better of
/// both starts is kept (Note [Two ways to trade]).
struct SiblingRecipe {
  llvm::SmallVector<Operation *> ops;  // of the fusion's body, in its order
  llvm::SmallVector<unsigned> inputs;  // the fusion's inputs it reads
  llvm::SmallVector<unsigned> results; // the fusion's other results it reads
};

/// The recipe of `fusion`'s result `result` from its other results, or
/// none: when it would read none of them (running the fusion again does
/// that), reduces, or is longer than a recomputed recipe may be.
std::optional<SiblingRecipe> siblingRecipe(FusionOp fusion, unsigned result) {
  Block &body = fusion.getBody().front();
  Operation *yield = body.getTerminator();
  // A result nothing reads any more (its readers moved to a clone) would
  // come back to life: the recipe computes it instead.
  llvm::DenseMap<Value, unsigned> others;
  for (auto [i, value] : llvm::enumerate(yield->getOperands()))
    if (i != result && !fusion.getResult(i).use_empty())
      others.try_emplace(value, static_cast<unsigned>(i));
  Value target = yield->getOperand(result);
  if (others.count(target))
    return std::nullopt;
  SiblingRecipe recipe;
  llvm::SmallPtrSet<Operation *, 16> ops;
  llvm::SmallVector<Value> work = {target};
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (!llvm::is_contained(recipe.inputs, arg.getArgNumber()))
        recipe.inputs.push_back(arg.getArgNumber());
      continue;
    }
    if (auto it = others.find(value); it != others.end()) {
      if (!llvm::is_contained(recipe.results, it->second))
        recipe.results.push_back(it->second);
      continue;
    }
    Operation *op = value.getDefiningOp();
    if (!ops.insert(op).second)
      continue;
    if (sinter::fusion::roleOf(op) == sinter::fusion::Role::Reduction ||
        ops.size() > static_cast<size_t>(sinter::fusion::kMaxRecomputedOps))
      return std::nullopt;
    llvm::append_range(work, op->getOperands());
  }
  if (recipe.results.empty())
    return std::nullopt;
  for (Operation &op : body.without_terminator())
    if (ops.contains(&op))
      recipe.ops.push_back(&op);
  llvm::sort(recipe.inputs);
  llvm::sort(recipe.results);
  return recipe;
}

/// A fusion computing `fusion`'s result `result` from its other results
/// (`recipe`), built at `builder`'s insertion point.
FusionOp buildFromSiblings(OpBuilder &builder, FusionOp fusion, unsigned result,
                           const SiblingRecipe &recipe) {
  Block &body = fusion.getBody().front();
  Operation *yield = body.getTerminator();
  llvm::SmallVector<Value> inputs;
  for (unsigned i : recipe.inputs)
    inputs.push_back(fusion.getInputs()[i]);
  for (unsigned r : recipe.results)
    inputs.push_back(fusion.getResult(r));
  auto copy = builder.create<FusionOp>(fusion.getLoc(),
                                       TypeRange{fusion.getResult(result).getType()}, inputs);
  Block *copyBody = builder.createBlock(&copy.getBody());
  IRMapping mapping;
  for (unsigned i : recipe.inputs)
    mapping.map(body.getArgument(i),
                copyBody->addArgument(body.getArgument(i).getType(), fusion.getLoc()));
  for (unsigned r : recipe.results)
    mapping.map(yield->getOperand(r),
                copyBody->addArgument(fusion.getResult(r).getType(), fusion.getLoc()));
  OpBuilder inside = OpBuilder::atBlockEnd(copyBody);
  for (Operation *op : recipe.ops)
    inside.clone(*op, mapping);
  inside.create<sinter::ir::YieldOp>(fusion.getLoc(), mapping.lookup(yield->getOperand(result)));
  builder.setInsertionPointAfter(copy);
  return copy;
}

/// A value of `bytes` added to `flow` for a kernel the simulation adds
/// (not an argument, not returned); its id.
int addValue(sinter::planner::Dataflow &flow, int64_t bytes) {
  flow.bytes.push_back(bytes);
  flow.argument.push_back(false);
  flow.returned.push_back(false);
  flow.donated.push_back(false);
  return static_cast<int>(flow.bytes.size()) - 1;
}

/// Drops what was added to `flow` after its first `values` values and
/// `kernels` kernels.
void truncate(sinter::planner::Dataflow &flow, size_t values, size_t kernels) {
  flow.bytes.resize(values);
  flow.argument.resize(values);
  flow.returned.resize(values);
  flow.donated.resize(values);
  flow.kernels.resize(kernels);
}

/// The kernels recomputed for one value and the results wanted of each.
struct Chain {
  llvm::DenseMap<int, llvm::SmallVector<unsigned>> results;
  llvm::SmallVector<int> order;
};

/// A value recomputed before kernel `before`: the kernels to run again
/// (`chain.order`: positions, producers first; the last computes the value)
/// and the value's result number in that last kernel.
struct Trade {
  Chain chain;
  unsigned result = 0;
  int before = -1;
  int64_t saving = 0;
  /// The chain is one fusion whose result is computed from its other
  /// results (Note [Recomputed from its siblings]), not run again.
  std::optional<SiblingRecipe> fromSiblings;
};

/// Note [Two ways to trade]
/// Over a budget, which trade goes first decides what the rest cost. The
/// one that lowers the bytes at the peak the most recomputes the largest
/// values, often through a matmul; the one that saves the most bytes for
/// each operation it runs again (a softmax from the scores it keeps before
/// a projection from its input) fits a transformer's budget with a third of
/// the extra arithmetic (bert-mini within 39 MiB: 13.4 -> 4.5 GFLOP a step,
/// the same plan size), but a ResNet's with more (resnet18 within 24 MiB:
/// 0.75 -> 2.0 GFLOP), its cheap trades each freeing little. So both run,
/// each on a copy of the function (from each of two starts, Note
/// [Recomputed from its siblings]), and the one kept fits the budget (or
/// else reaches the lower peak) with fewer extra operations, and its body
/// becomes the function's.
enum class Choice { LargestSaving, BytesPerOperation };

/// What trading did to a function: values recomputed, the extra
/// operations, the simulated peak after, and (with `explain`) a remark for
/// each trade, at the location of the kernel whose result it recomputes.
struct Outcome {
  int64_t count = 0, operations = 0, peak = 0, fromSiblings = 0;
  llvm::SmallVector<std::pair<Location, std::string>> remarks;
};

struct Rematerialize : sinter::impl::SinterRematerializeBase<Rematerialize> {
  using SinterRematerializeBase::SinterRematerializeBase;
  Rematerialize(const sinter::SinterRematerializeOptions &options,
                sinter::passes::MemoryRules rules)
      : SinterRematerializeBase(options), rules(std::move(rules)) {}

  /// The target's answers (Note [One memory model] in
  /// sinter/Passes/MemoryPlanner.h); empty: each value only its bytes.
  sinter::passes::MemoryRules rules;

  /// Forgets the facts of the kernels a rewrite erases (their memory may
  /// hold a new op next).
  struct Forget : RewriterBase::Listener {
    explicit Forget(sinter::passes::KernelFacts &facts) : facts(facts) {}
    void notifyOperationErased(Operation *op) override { facts.forget(op); }
    void notifyOperationModified(Operation *op) override { facts.forget(op); }
    sinter::passes::KernelFacts &facts;
  };

  /// How deep a chain of producers is recomputed for one value.
  static constexpr int kMaxChain = 4;

  /// Whether the kernel at `k` may run again: a fusion (only pointwise ones
  /// without a budget); a matmul or a convolution too over a budget.
  bool recomputable(Operation *op, bool onlyPointwise) const {
    if (auto fusion = dyn_cast<FusionOp>(op))
      return !onlyPointwise || !hasReduction(fusion);
    return !onlyPointwise && isa<sinter::ir::MatmulOp, sinter::ir::Conv2dOp>(op);
  }

  /// The best trade at the current peak, or none: of the fusion results
  /// (and, over a budget, matmul and convolution results) live at the peak
  /// for a later use, the one whose recomputation before
  /// that use lowers the bytes live at the peak the most (or, by `choice`,
  /// saves the most bytes per extra operation) without raising the
  /// peak anywhere else (each trade simulated on the whole order). An
  /// operand that is gone by then is recomputed too when its producer may
  /// be (a chain, producers first); otherwise it is kept longer.
  Trade bestTrade(const sinter::passes::FunctionFlow &flow, bool onlyPointwise, Choice choice,
                  bool siblings) const {
    const sinter::planner::Dataflow &data = flow.flow;
    size_t count = data.kernels.size();
    std::vector<int> order(count);
    for (size_t k = 0; k < count; ++k)
      order[k] = static_cast<int>(k);
    std::vector<int64_t> live = sinter::planner::liveBytes(data, order);
    if (live.empty())
      return Trade();
    int peak = static_cast<int>(std::max_element(live.begin(), live.end()) - live.begin());
    // Each value's readers (kernel positions, ascending) and writer.
    size_t n = data.bytes.size();
    std::vector<std::vector<int>> readers(n);
    std::vector<int> writer(n, -1);
    for (size_t k = 0; k < count; ++k) {
      for (int v : data.kernels[k].reads)
        if (readers[v].empty() || readers[v].back() != static_cast<int>(k))
          readers[v].push_back(static_cast<int>(k));
      for (int v : data.kernels[k].writes)
        writer[v] = static_cast<int>(k);
    }
    // Each candidate is simulated on `traded`: the program with its clones
    // added, then taken out again.
    sinter::planner::Dataflow traded = data;
    Trade best;
    int64_t bestPeak = live[peak], bestAtPeak = live[peak];
    double bestValue = 0;
    for (int k = 0; k < peak; ++k) {
      Operation *kernel = flow.kernels[k];
      bool rerun = isa<FusionOp, sinter::ir::MatmulOp, sinter::ir::Conv2dOp>(kernel) &&
                   recomputable(kernel, onlyPointwise);
      auto fusion = dyn_cast<FusionOp>(kernel);
      if (!rerun && !fusion)
        continue;
      for (unsigned r = 0; r < kernel->getNumResults(); ++r) {
        int v = data.kernels[k].writes[r];
        if (data.returned[v] || data.bytes[v] < minBytes)
          continue;
        const std::vector<int> &uses = readers[v];
        auto after = std::upper_bound(uses.begin(), uses.end(), peak);
        if (after == uses.end() || std::binary_search(uses.begin(), uses.end(), peak))
          continue; // not live at the peak, or read there
        int at = *after;
        // The program with `clones` (appended to `traded`) run before `at`,
        // the last writing `copy`, which `at` and every later reader of the
        // value read: kept as `best` when better. `traded` is the program
        // again after.
        auto consider = [&](const std::vector<int> &clones, int copy,
                            const std::function<int64_t()> &operations, Trade candidate) {
          std::vector<int *> redirected;
          for (int later = at; later < static_cast<int>(count); ++later)
            for (int &read : traded.kernels[later].reads)
              if (read == v) {
                read = copy;
                redirected.push_back(&read);
              }
          std::vector<int> tradedOrder(order.begin(), order.begin() + at);
          tradedOrder.insert(tradedOrder.end(), clones.begin(), clones.end());
          tradedOrder.insert(tradedOrder.end(), order.begin() + at, order.end());
          std::vector<int64_t> after2 = sinter::planner::liveBytes(traded, tradedOrder);
          for (int *read : redirected)
            *read = v;
          truncate(traded, n, count);
          int64_t newPeak = *std::max_element(after2.begin(), after2.end());
          int64_t atPeak = after2[peak]; // the old peak's kernel keeps its position
          if (onlyPointwise || choice == Choice::LargestSaving) {
            if (newPeak > bestPeak || (newPeak == bestPeak && atPeak >= bestAtPeak))
              return;
          } else {
            // Of the trades that lower the bytes at the peak without raising
            // the peak, the one that saves the most bytes for each operation
            // it runs again (plus one per 4 bytes of the value, which is
            // written again; Note [Two ways to trade]).
            if (newPeak > live[peak] || atPeak >= live[peak])
              return;
            double value = static_cast<double>(live[peak] - atPeak) /
                           static_cast<double>(operations() + data.bytes[v] / 4 + 1);
            if (value <= bestValue)
              return;
            bestValue = value;
          }
          candidate.saving = live[peak] - atPeak;
          best = std::move(candidate);
          bestPeak = newPeak;
          bestAtPeak = atPeak;
        };
        // Note [Recomputed from its siblings]: one new kernel reading the
        // fusion's other results.
        if (fusion && siblings)
          if (std::optional<SiblingRecipe> recipe = siblingRecipe(fusion, r)) {
            sinter::planner::Dataflow::Kernel clone;
            for (unsigned i : recipe->inputs)
              clone.reads.push_back(data.kernels[k].reads[i]);
            for (unsigned other : recipe->results)
              clone.reads.push_back(data.kernels[k].writes[other]);
            // As for a chain: an argument is never kept longer (Note [Donation]).
            bool keepsArgument = llvm::any_of(clone.reads, [&](int operand) {
              return data.argument[operand] && !data.returned[operand] &&
                     readers[operand].back() < at;
            });
            if (!keepsArgument) {
              int copy = addValue(traded, data.bytes[v]);
              clone.writes.push_back(copy);
              traded.kernels.push_back(std::move(clone));
              Trade candidate;
              candidate.chain.results[k] = {r};
              candidate.chain.order = {k};
              candidate.result = r;
              candidate.before = at;
              candidate.fromSiblings = recipe;
              consider(
                  {static_cast<int>(traded.kernels.size()) - 1}, copy,
                  [&] { return operationsOf(recipe->ops); }, std::move(candidate));
            }
          }
        if (!rerun)
          continue;
        // The chain: kernels whose outputs are gone by `at`, recomputed
        // when they can be (else those outputs are kept longer), each for
        // the results the chain reads, reading only what those need.
        Chain chain;
        std::function<bool(int, unsigned, int)> need = [&](int kernel, unsigned result, int depth) {
          llvm::SmallVector<unsigned> &wanted = chain.results[kernel];
          if (llvm::is_contained(wanted, result))
            return true;
          Chain before = chain;
          chain.results[kernel].push_back(result);
          for (unsigned i : neededOperands(flow.kernels[kernel], result)) {
            int operand = data.kernels[kernel].reads[i];
            if (data.returned[operand] || readers[operand].back() >= at)
              continue; // still there
            // An argument read later than now could no longer be donated
            // to a result (Note [Donation]): never kept longer.
            if (data.argument[operand]) {
              chain = std::move(before);
              return false;
            }
            int producer = writer[operand];
            if (producer < 0 || depth >= kMaxChain ||
                !recomputable(flow.kernels[producer], onlyPointwise))
              continue; // kept longer
            auto &writes = data.kernels[producer].writes;
            unsigned which = static_cast<unsigned>(llvm::find(writes, operand) - writes.begin());
            need(producer, which, depth + 1);
          }
          return true;
        };
        if (!need(k, r, 1))
          continue;
        chain.order.clear();
        for (auto &[kernel, wanted] : chain.results)
          if (!wanted.empty())
            chain.order.push_back(kernel);
        llvm::sort(chain.order); // producers first: the program's order
        // The program with the trade made: the chain's clones before `at`,
        // reading each other's copies.
        llvm::DenseMap<int, int> copyOf;
        std::vector<int> clones;
        for (int kernel : chain.order) {
          sinter::planner::Dataflow::Kernel clone;
          const llvm::SmallVector<unsigned> &wanted = chain.results[kernel];
          llvm::SmallVector<unsigned> operands;
          for (unsigned result : wanted)
            for (unsigned i : neededOperands(flow.kernels[kernel], result))
              if (!llvm::is_contained(operands, i))
                operands.push_back(i);
          for (unsigned i : operands) {
            int operand = data.kernels[kernel].reads[i];
            clone.reads.push_back(copyOf.count(operand) ? copyOf[operand] : operand);
          }
          for (auto [w, out] : llvm::enumerate(data.kernels[kernel].writes)) {
            // Only the results the chain wants are written.
            bool read = llvm::is_contained(wanted, static_cast<unsigned>(w));
            int copy = addValue(traded, read ? data.bytes[out] : 0);
            copyOf[out] = copy;
            clone.writes.push_back(copy);
          }
          clones.push_back(static_cast<int>(traded.kernels.size()));
          traded.kernels.push_back(std::move(clone));
        }
        consider(
            clones, copyOf[v],
            [&] {
              int64_t operations = 0;
              for (int kernel : chain.order)
                operations += operationsOf(flow.kernels[kernel], chain.results[kernel]);
              return operations;
            },
            Trade{chain, r, at, 0, std::nullopt});
      }
    }
    return best;
  }

  /// The positions of a function's kernels: their current order.
  static std::vector<int> inOrder(const sinter::passes::FunctionFlow &flow) {
    std::vector<int> order(flow.flow.kernels.size());
    std::iota(order.begin(), order.end(), 0);
    return order;
  }

  /// Trades in `function`, adding to `outcome`: pointwise fusions' results
  /// while any lowers the peak (`onlyPointwise`), else any recomputable
  /// result, each chosen by `choice`, until the function fits the budget or
  /// nothing is left to trade; with `siblings`, results recomputed from
  /// their kernel's other results too (Note [Recomputed from its siblings]).
  void trade(func::FuncOp function, bool onlyPointwise, Choice choice, bool siblings,
             sinter::passes::KernelFacts &facts, Outcome &outcome) {
    // Note [Trading by the arena]: under a budget the function is done when
    // its arena fits, simulated with the target's rules as buffer
    // assignment will plan it (Note [One memory model] in
    // sinter/Passes/MemoryPlanner.h): in-place writes, scratch, size classes
    // and packing. Which trade comes next is still chosen by the plain count
    // of each value's bytes (an input and the result written over it both
    // counted): its simulation of a candidate agrees with the function the
    // trade makes, where the target's rules for a clone are known only once
    // it is made and pruned (choosing by them made trades that raised the
    // arena, and some ways traded without end: bert-mini in 39 MiB ran its
    // passes for 10 s, against 1.1 s). The rules of each kernel are asked
    // once per run of the pass (the function's copies share them) and the
    // check packs only until it is past the budget (fitsArena), so the
    // simulation costs less than the trades' own. Without a budget the
    // rules are not asked at all, so those plans stay as they were.
    bool exact = budget > 0;
    Forget forget(facts);
    for (int round = 0; round < 1000; ++round) {
      if (!onlyPointwise) {
        // The arena: what the values pack into (results included, Note
        // [Results in the arena], but for the updates written into their
        // arguments' memory).
        sinter::passes::FunctionFlow planned = sinter::passes::dataflowOf(function, &facts);
        if (sinter::planner::fitsArena(planned.flow, inOrder(planned), budget))
          break;
      }
      sinter::passes::FunctionFlow flow = sinter::passes::dataflowOf(function);
      Trade trade = bestTrade(flow, onlyPointwise, choice, siblings);
      if (trade.chain.order.empty())
        break;
      Operation *use = flow.kernels[trade.before];
      Operation *last = flow.kernels[trade.chain.order.back()];
      OpBuilder builder(use);
      IRMapping copies;
      Operation *clone = nullptr;
      llvm::SmallVector<Operation *> clones;
      int64_t operations = 0;
      if (trade.fromSiblings) {
        clone = buildFromSiblings(builder, cast<FusionOp>(last), trade.result, *trade.fromSiblings);
        clones.push_back(clone);
        operations = operationsOf(trade.fromSiblings->ops);
        ++outcome.fromSiblings;
      } else {
        for (int kernel : trade.chain.order) {
          clone = builder.clone(*flow.kernels[kernel], copies);
          clones.push_back(clone);
          operations += operationsOf(flow.kernels[kernel], trade.chain.results[kernel]);
        }
      }
      Value original = last->getResult(trade.result);
      Block *block = use->getBlock();
      // The use and every later reader read the clone; a view's later
      // readers read the same view of the clone.
      std::function<void(Value, Value)> redirect = [&](Value from, Value to) {
        for (OpOperand &operand : llvm::make_early_inc_range(from.getUses())) {
          Operation *user = operand.getOwner();
          if (user->getBlock() != block)
            continue;
          if (sinter::passes::isView(user)) {
            OpBuilder before(use);
            Operation *late = before.clone(*user);
            late->setOperand(0, to);
            redirect(user->getResult(0), late->getResult(0));
            if (late->use_empty())
              late->erase();
            continue;
          }
          if (!user->isBeforeInBlock(use))
            operand.set(to);
        }
      };
      redirect(original, clone->getResult(trade.fromSiblings ? 0 : trade.result));
      // The clones compute only what is read of them, from what that needs.
      RewritePatternSet prune(&getContext());
      FusionOp::getCanonicalizationPatterns(prune, &getContext());
      GreedyRewriteConfig config;
      config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
      config.listener = &forget;
      (void)applyOpPatternsAndFold(clones, FrozenRewritePatternSet(std::move(prune)), config);
      ++outcome.count;
      outcome.operations += operations;
      if (explain)
        outcome.remarks.emplace_back(
            last->getLoc(),
            llvm::formatv(
                "result {0} ({1} bytes) recomputed before its use at {2} "
                "instead of kept ({3}): {4} fewer bytes at the peak, {5} extra "
                "operations",
                trade.result, sinter::passes::bytesOf(original), use->getLoc(),
                trade.fromSiblings
                    ? std::string("from the kernel's other results")
                    : llvm::formatv("{0} kernel(s) run again", trade.chain.order.size()).str(),
                trade.saving, operations)
                .str());
    }
    // The estimate: the arena as planned, packed (Note [One memory model]).
    sinter::passes::FunctionFlow flow =
        sinter::passes::dataflowOf(function, exact ? &facts : nullptr);
    outcome.peak = exact ? sinter::planner::packedArena(flow.flow, inOrder(flow))
                         : sinter::planner::simulatedPeak(flow.flow, inOrder(flow));
  }

  /// A copy of `function` whose kernels share the facts known of the
  /// original's (a fusion's plan is the dear part of a simulation).
  static func::FuncOp copyOf(func::FuncOp function, sinter::passes::KernelFacts &facts) {
    IRMapping copies;
    func::FuncOp copy = function.clone(copies);
    for (Operation &op : function.getBody().front())
      facts.copy(&op, copies.lookup(&op));
    return copy;
  }

  /// Forgets the facts of `function`'s kernels, before they are erased.
  static void forgetBody(func::FuncOp function, sinter::passes::KernelFacts &facts) {
    for (Operation &op : function.getBody().front())
      facts.forget(&op);
  }
  /// Erases `function`, forgetting its kernels' facts.
  static void erase(func::FuncOp function, sinter::passes::KernelFacts &facts) {
    forgetBody(function, facts);
    function.erase();
  }

  /// Emits the remarks `outcome` holds, and forgets them.
  static void emitRemarks(Outcome &outcome) {
    for (auto &[location, text] : outcome.remarks)
      mlir::emitRemark(location) << text;
    outcome.remarks.clear();
  }

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (!function.getBody().hasOneBlock())
      return;
    // Pointwise trades first, always. Under a budget they may leave the
    // budget's trades less to work with (Note [Recomputed from its
    // siblings]): then also on a copy without results recomputed from their
    // siblings.
    Outcome outcome, plainOutcome;
    sinter::passes::KernelFacts facts(rules);
    func::FuncOp plain = budget > 0 ? copyOf(function, facts) : func::FuncOp();
    trade(function, /*onlyPointwise=*/true, Choice::LargestSaving, /*siblings=*/true, facts,
          outcome);
    if (plain && outcome.peak > budget && outcome.fromSiblings > 0) {
      trade(plain, /*onlyPointwise=*/true, Choice::LargestSaving, /*siblings=*/false, facts,
            plainOutcome);
    } else if (plain) {
      erase(plain, facts);
      plain = func::FuncOp();
    }
    if (budget > 0 && outcome.peak > budget) {
      // Over a budget, any fusion's (and matmuls in their chains), chosen
      // both ways, from both starts, each on a copy (Note [Two ways to
      // trade]); the copy that fits with fewer extra operations (else
      // reaches the lower peak) becomes the function.
      auto better = [&](const Outcome &a, const Outcome &b) {
        bool aFits = a.peak <= budget, bFits = b.peak <= budget;
        if (aFits != bFits)
          return aFits;
        if (!aFits && a.peak != b.peak)
          return a.peak < b.peak;
        return a.operations < b.operations;
      };
      func::FuncOp kept;
      Outcome keptOutcome;
      for (bool siblings : {true, false}) {
        // Without sibling trades among the pointwise ones both starts are
        // the function; the budget's trades still go both ways.
        bool fromFunction = siblings || !plain;
        for (Choice choice : {Choice::LargestSaving, Choice::BytesPerOperation}) {
          func::FuncOp copy = copyOf(fromFunction ? function : plain, facts);
          Outcome tried = fromFunction ? outcome : plainOutcome;
          trade(copy, /*onlyPointwise=*/false, choice, siblings, facts, tried);
          if (kept && !better(tried, keptOutcome)) {
            erase(copy, facts);
            continue;
          }
          if (kept)
            erase(kept, facts);
          kept = copy;
          keptOutcome = std::move(tried);
        }
      }
      forgetBody(function, facts);
      function.getBody().takeBody(kept.getBody());
      kept.erase();
      outcome = std::move(keptOutcome);
    }
    if (plain)
      erase(plain, facts);
    emitRemarks(outcome);
    // Under a budget, the arena the trades left, as the pass estimates it:
    // over the budget means nothing is left to trade (Note [Fitting a memory
    // budget] in compiler/lib/Compiler/Pipeline.cpp).
    if (budget > 0)
      function->setAttr("sinter.estimated_peak",
                        Builder(&getContext()).getI64IntegerAttr(outcome.peak));
    // What was traded, for the compiler's metrics: [recomputed, operations].
    if (outcome.count > 0)
      function->setAttr(
          "sinter.rematerialized",
          Builder(&getContext()).getDenseI64ArrayAttr({outcome.count, outcome.operations}));
  }
};

} // namespace

std::unique_ptr<mlir::Pass>
sinter::passes::createSinterRematerialize(const SinterRematerializeOptions &options,
                                          MemoryRules rules) {
  return std::make_unique<Rematerialize>(options, std::move(rules));
}
