//===- Fusion.cpp - group ops into sinter.fusion regions (the driver) ------===//
//
// Greedy producer-into-consumer grouping in program order, as XLA's
// instruction fusion does: each fusible op starts a group and absorbs the
// groups of its operands' producers when FusionPolicy allows it, the merged
// group keeps one iteration domain, and no path leaves the group and comes
// back (that would be a cycle between kernels). Each group is then outlined
// into a sinter.fusion whose inputs are the values it reads from outside and
// whose results are the values used outside; splat constants are cloned in.
// The fusion's location fuses its ops' locations, so a kernel still names
// the user's lines.
//
//===----------------------------------------------------------------------===//
#include "Dataflow.h"

#include "sinter/Passes/FusionPolicy.h"
#include "sinter/Passes/Passes.h"

#include "sinter/Dialect/Sinter/SinterOps.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "sinter-fusion"

namespace sinter {
#define GEN_PASS_DEF_SINTERFUSION
#include "sinter/Passes/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::ir;
using sinter::fusion::Domain;
using sinter::fusion::FusionDecision;
using sinter::fusion::Role;
using sinter::fusion::text;

namespace {

struct Group {
  SmallVector<Operation *> ops;
  /// Ops evaluated only through a layout op at remapped indices (a bias
  /// broadcast over rows, a slice of a larger value): recomputed where
  /// needed, so they do not have to match the fusion's domain.
  llvm::SmallPtrSet<Operation *, 8> remapped;
  /// Set by a row reduction; otherwise every op covers `elements` elements.
  std::optional<Domain> rowDomain;
  int64_t elements = 0;
  bool dead = false;
  /// A reduction that is not a row reduction: a kernel of its own.
  bool isolated = false;
};

int64_t elementsOf(Operation *op) {
  return cast<ShapedType>(op->getResult(0).getType()).getNumElements();
}

class Grouping {
public:
  Grouping(bool explain, const sinter::fusion::FusionRules &rules)
      : explain_(explain), rules_(rules) {}

  void run(Block &block) {
    for (Operation &op : block) {
      order_[&op] = static_cast<int64_t>(order_.size());
      if (sinter::fusion::roleOf(&op) == Role::Constant || op.getNumResults() != 1)
        continue;
      if (FusionDecision d = sinter::fusion::canFuse(&op, rules_); !d) {
        report(&op, text("kept as its own op: ", d.reason()));
        continue;
      }
      std::optional<Domain> domain;
      int id = static_cast<int>(groups_.size());
      Group group;
      group.ops = {&op};
      if (FusionDecision d = sinter::fusion::reductionDomain(&op, domain); !d) {
        // Still a kernel, but alone: its loops do not follow rows.
        report(&op, text("kept as its own kernel: ", d.reason()));
        group.isolated = true;
      }
      group.rowDomain = domain;
      group.elements = elementsOf(&op);
      groups_.push_back(std::move(group));
      groupOf_[&op] = id;
      if (groups_[id].isolated)
        continue;
      for (Value operand : op.getOperands()) {
        Operation *producer = operand.getDefiningOp();
        auto it = producer ? groupOf_.find(producer) : groupOf_.end();
        if (it == groupOf_.end() || it->second == groupOf_[&op])
          continue;
        FusionDecision d = canMerge(it->second, groupOf_[&op], &op);
        if (d)
          merge(it->second, groupOf_[&op]);
        else
          report(&op, text("not fused with its operand '", producer->getName().getStringRef(),
                           "': ", d.reason()));
      }
    }
  }

  std::vector<Group> &groups() { return groups_; }

  /// Note [Recompute, do not store] in FusionPolicy.h: a value that other
  /// fusions read is recomputed in each of them when its recipe is short and
  /// elementwise, so its own fusion no longer stores it. Runs after grouping.
  void recomputeInConsumers() {
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g].dead || groups_[g].isolated)
        continue;
      // The group's ops may grow below (as a consumer); take them as now.
      SmallVector<Operation *> ops(groups_[g].ops);
      llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
      for (Operation *op : ops)
        recompute(static_cast<int>(g), op->getResult(0));
    }
  }

private:
  void report(Operation *op, const std::string &message) {
    if (explain_)
      op->emitRemark() << message;
  }

  FusionDecision canMerge(int producer, int consumer, Operation *at) {
    const Group &a = groups_[producer], &b = groups_[consumer];
    if (a.isolated || b.isolated)
      return FusionDecision::forbid("a reduction over leading dims runs as its own kernel");
    // A layout consumer reads its operand at remapped indices, so a cheap
    // producer (no reduction) of another size is recomputed where it is read.
    if (sinter::fusion::roleOf(at) == Role::Layout && !a.rowDomain && a.elements != b.elements) {
      if (FusionDecision d = noCycle(producer, consumer, at); !d)
        return d;
      remapNext_ = true;
      return FusionDecision::allow();
    }
    std::optional<Domain> domain = a.rowDomain ? a.rowDomain : b.rowDomain;
    if (a.rowDomain && b.rowDomain &&
        (a.rowDomain->rows != b.rowDomain->rows || a.rowDomain->cols != b.rowDomain->cols))
      return FusionDecision::forbid(text("their row reductions have different domains (",
                                         a.rowDomain->rows, " x ", a.rowDomain->cols, " and ",
                                         b.rowDomain->rows, " x ", b.rowDomain->cols, ")"));
    if (domain) {
      // An op read only at remapped indices need not fit the row domain; one
      // whose value is also read outside would be a result of the kernel,
      // and a result of a row kernel is a whole row or one value per row (a
      // [4, 1] mask also returned by the step, beside a [2, 4, 4] layer
      // norm, was written as if it had 8 rows).
      auto readOutside = [&](Operation *op) {
        return llvm::any_of(op->getUsers(), [&](Operation *user) {
          auto it = groupOf_.find(user);
          return it == groupOf_.end() || (it->second != producer && it->second != consumer);
        });
      };
      for (const Group *g : {&a, &b})
        for (Operation *op : g->ops)
          if (g->remapped.contains(op) && !readOutside(op))
            continue;
          else if (FusionDecision d = sinter::fusion::fitsDomain(op, *domain); !d)
            return FusionDecision::forbid(
                text("'", op->getName().getStringRef(), "': ", d.reason()));
    } else if (a.elements != b.elements) {
      return FusionDecision::forbid(
          text("one loop cannot cover both ", a.elements, " and ", b.elements, " elements"));
    }
    if (FusionDecision d = noCycle(producer, consumer, at); !d)
      return d;
    return FusionDecision::allow();
  }

  /// Merging must not make two kernels wait on each other.
  FusionDecision noCycle(int producer, int consumer, Operation *at) {
    if (Operation *through = pathOutside(producer, consumer, at))
      return FusionDecision::forbid(text("the result would reach the fusion again through '",
                                         through->getName().getStringRef(),
                                         "', a cycle between kernels"));
    return FusionDecision::allow();
  }

  /// An op outside both groups on a path between them (in either
  /// direction), or null. Other groups count as one future kernel each: a
  /// path that enters one of their ops continues from all of them. Ops
  /// after `at` cannot be on such a path yet.
  Operation *pathOutside(int producer, int consumer, Operation *at) {
    if (Operation *op = reach(producer, consumer, at))
      return op;
    return reach(consumer, producer, at);
  }

  Operation *reach(int from, int to, Operation *at) {
    int64_t limit = order_[at];
    auto groupOf = [&](Operation *op) {
      auto it = groupOf_.find(op);
      return it == groupOf_.end() ? -1 : it->second;
    };
    SmallVector<Operation *> work;
    llvm::SmallPtrSet<Operation *, 32> seen;
    std::vector<bool> expanded(groups_.size(), false);
    auto visitUsersOf = [&](Operation *op) {
      for (Operation *user : op->getUsers()) {
        int g = groupOf(user);
        if (g == from || !seen.insert(user).second)
          continue;
        work.push_back(user);
      }
    };
    for (Operation *op : groups_[from].ops)
      visitUsersOf(op);
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!order_.count(op) || order_[op] > limit)
        continue;
      int g = groupOf(op);
      if (g == to)
        continue; // a direct edge: merging makes it internal
      for (Operation *user : op->getUsers())
        if (groupOf(user) == to)
          return op;
      visitUsersOf(op);
      if (g >= 0 && !expanded[g]) {
        expanded[g] = true;
        for (Operation *member : groups_[g].ops)
          if (seen.insert(member).second)
            work.push_back(member);
      }
    }
    return nullptr;
  }

  /// Recomputes `value` (made in group `g`) in every group that reads it,
  /// when all its readers are fusions that can take its recipe.
  void recompute(int g, Value value) {
    SmallVector<int> readers;
    for (Operation *user : value.getUsers()) {
      auto it = groupOf_.find(user);
      if (it != groupOf_.end() && it->second == g)
        continue;
      Role role = sinter::fusion::roleOf(user);
      // A library op or the function's return needs the value in memory.
      if (it == groupOf_.end() || groups_[it->second].isolated ||
          (role != Role::Elementwise && role != Role::Reduction))
        return;
      if (!llvm::is_contained(readers, it->second))
        readers.push_back(it->second);
    }
    if (readers.empty())
      return;
    // The recipe: the group's ops that compute `value` from the group's
    // inputs, its row reductions and constants, and (with `readStored`) the
    // values it stores anyway, when no larger than `value`.
    SmallVector<Operation *> cone;
    llvm::SetVector<Value> reads;
    auto recipe = [&](bool readStored) {
      cone.clear();
      reads.clear();
      llvm::SmallPtrSet<Operation *, 16> seen;
      SmallVector<Operation *> work = {value.getDefiningOp()};
      while (!work.empty()) {
        Operation *op = work.pop_back_val();
        if (!seen.insert(op).second)
          continue;
        cone.push_back(op);
        if (cone.size() > static_cast<size_t>(sinter::fusion::kMaxRecomputedOps))
          break; // canRecompute says why
        for (Value operand : op->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (producer && sinter::fusion::roleOf(producer) == Role::Constant)
            continue; // cloned into every fusion anyway
          auto it = producer ? groupOf_.find(producer) : groupOf_.end();
          bool inside = it != groupOf_.end() && it->second == g;
          auto broadcast = inside ? dyn_cast<BroadcastInDimOp>(producer) : nullptr;
          if (!inside || sinter::fusion::roleOf(producer) == Role::Reduction) {
            reads.insert(operand);
          } else if (!readStored || !storedBy(g, operand) ||
                     (!broadcast &&
                      sinter::passes::bytesOf(operand) > sinter::passes::bytesOf(value))) {
            work.push_back(producer);
          } else if (broadcast && readByKernelsOnly(operand)) {
            // Stored as its small operand (BroadcastFusionResultsIntoReaders).
            if (seen.insert(broadcast).second)
              cone.push_back(broadcast);
            reads.insert(broadcast.getOperand());
          } else if (broadcast) {
            work.push_back(producer);
          } else {
            reads.insert(operand);
          }
        }
      }
      return sinter::fusion::canRecompute(value, cone, reads.getArrayRef());
    };
    // Reading a stored value can make a recipe read two tensors where
    // computing that value again read one: then the recipe computes it.
    if (!recipe(/*readStored=*/true))
      if (FusionDecision d = recipe(/*readStored=*/false); !d) {
        report(value.getDefiningOp(),
               text("stored for a later kernel, not recomputed there: ", d.reason()));
        return;
      }
    for (int h : readers) {
      const Group &reader = groups_[h];
      for (Operation *op : cone) {
        FusionDecision d =
            reader.rowDomain
                ? sinter::fusion::fitsDomain(op, *reader.rowDomain)
                : (cast<ShapedType>(op->getResult(0).getType()).getNumElements() == reader.elements
                       ? FusionDecision::allow()
                       : FusionDecision::forbid("its reader's kernel has another size"));
        if (!d) {
          report(value.getDefiningOp(), text("stored for a later kernel, not recomputed there: '",
                                             op->getName().getStringRef(), "': ", d.reason()));
          return;
        }
      }
    }
    // Clone the recipe into each reader, before its first use there, in
    // program order (operands first).
    llvm::sort(cone, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    OpBuilder builder(value.getContext());
    for (int h : readers) {
      Operation *first = nullptr;
      for (Operation *user : value.getUsers())
        if (groupOf_.lookup(user) == h && (!first || user->isBeforeInBlock(first)))
          first = user;
      builder.setInsertionPoint(first);
      IRMapping mapping;
      for (Operation *op : cone) {
        // Recipes overlap (GELU's intermediates share x): one copy per
        // reader, moved up when a later recipe needs it sooner.
        Operation *&clone = clones_[{op, h}];
        if (clone) {
          if (first->isBeforeInBlock(clone))
            clone->moveBefore(first);
        } else {
          clone = builder.clone(*op, mapping);
          order_[clone] = order_[first];
          groupOf_[clone] = h;
          groups_[h].ops.push_back(clone);
        }
        mapping.map(op->getResults(), clone->getResults());
      }
      Value copy = mapping.lookup(value);
      value.replaceUsesWithIf(copy, [&](OpOperand &use) {
        auto it = groupOf_.find(use.getOwner());
        return it != groupOf_.end() && it->second == h && use.getOwner() != copy.getDefiningOp();
      });
    }
    report(value.getDefiningOp(),
           text("recomputed in ", readers.size(), " later kernel(s) instead of stored (",
                cone.size(), " ops)"));
  }

  /// Whether group `g` stores `value` (one of its results) for another
  /// kernel. Values before `value` in the group were offered to their
  /// readers first, so what they still store is settled. A recipe reads
  /// such a value instead of computing it (Note [Recompute, do not store]).
  bool storedBy(int g, Value value) {
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      auto it = groupOf_.find(user);
      return it == groupOf_.end() || it->second != g;
    });
  }

  /// Whether every reader of `value` becomes a fusion (no library call or
  /// return needs it in memory at its own size).
  bool readByKernelsOnly(Value value) {
    return llvm::all_of(value.getUsers(),
                        [&](Operation *user) { return groupOf_.count(user) != 0; });
  }

  void merge(int from, int into) {
    Group &source = groups_[from], &target = groups_[into];
    for (Operation *op : source.ops) {
      groupOf_[op] = into;
      target.ops.push_back(op);
      if (remapNext_ || source.remapped.contains(op))
        target.remapped.insert(op);
    }
    remapNext_ = false;
    if (!target.rowDomain)
      target.rowDomain = source.rowDomain;
    source.ops.clear();
    source.dead = true;
  }

  bool explain_;
  const sinter::fusion::FusionRules &rules_;
  bool remapNext_ = false; // the pending merge is through a layout op
  std::vector<Group> groups_;
  llvm::DenseMap<Operation *, int> groupOf_;
  llvm::DenseMap<Operation *, int64_t> order_;
  /// The copy of an op recomputed in a reader group, by (op, group).
  llvm::DenseMap<std::pair<Operation *, int>, Operation *> clones_;
};

/// Note [Scalars are copied, not shared] in FusionPolicy.h: each reader that
/// `takesScalarCopies` gets its own copy of the scalar ops it reaches through
/// scalar ops only, each op copied once per reader however many paths lead
/// to it, placed just before the reader. Originals no reader needs any more
/// are erased.
void copyScalarsPerReader(Block &block, const sinter::fusion::FusionRules &rules) {
  using sinter::fusion::isCopiedScalar;
  SmallVector<Operation *> readers;
  for (Operation &op : block)
    if (sinter::fusion::takesScalarCopies(&op, rules) && !isCopiedScalar(&op))
      readers.push_back(&op);
  OpBuilder builder(block.getParent()->getContext());
  llvm::SetVector<Operation *> copied;
  for (Operation *reader : readers) {
    llvm::SetVector<Operation *> scalars;
    SmallVector<Value> work(reader->getOperands());
    while (!work.empty()) {
      Operation *op = work.pop_back_val().getDefiningOp();
      if (op && isCopiedScalar(op) && scalars.insert(op))
        work.append(op->operand_begin(), op->operand_end());
    }
    if (scalars.empty())
      continue;
    SmallVector<Operation *> ordered(scalars.begin(), scalars.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    IRMapping copies;
    builder.setInsertionPoint(reader);
    for (Operation *op : ordered)
      builder.clone(*op, copies);
    for (OpOperand &use : reader->getOpOperands())
      if (Value copy = copies.lookupOrNull(use.get()))
        use.set(copy);
    copied.insert(ordered.begin(), ordered.end());
  }
  SmallVector<Operation *> originals(copied.begin(), copied.end());
  llvm::sort(originals, [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
  for (Operation *op : originals) // readers before what they read
    if (op->use_empty())
      op->erase();
}

/// Replaces the ops of `group` with one sinter.fusion.
void outline(Group &group, OpBuilder &builder) {
  llvm::SmallPtrSet<Operation *, 16> members(group.ops.begin(), group.ops.end());
  llvm::sort(group.ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  llvm::SetVector<Value> inputs;
  SmallVector<Value> outputs;
  SmallVector<Location> locations;
  for (Operation *op : group.ops) {
    locations.push_back(op->getLoc());
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (producer && members.contains(producer))
        continue;
      if (producer && sinter::fusion::roleOf(producer) == Role::Constant)
        continue; // cloned into the body
      inputs.insert(operand);
    }
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *u) { return !members.contains(u); }))
        outputs.push_back(result);
  }
  if (outputs.empty())
    return; // dead: left for DCE

  Operation *last = group.ops.back();
  builder.setInsertionPoint(last);
  Location loc = builder.getFusedLoc(locations);
  SmallVector<Type> resultTypes;
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  auto fusion = builder.create<FusionOp>(loc, resultTypes, inputs.getArrayRef());
  Block *body = builder.createBlock(&fusion.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  builder.setInsertionPointToStart(body);
  for (Operation *op : group.ops) {
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp();
          producer && !mapping.contains(operand) &&
          sinter::fusion::roleOf(producer) == Role::Constant)
        mapping.map(operand, builder.clone(*producer)->getResult(0));
    builder.clone(*op, mapping);
  }
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(mapping.lookup(v));
  builder.create<YieldOp>(loc, yielded);

  for (auto [old, replacement] : llvm::zip(outputs, fusion.getResults()))
    old.replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return !members.contains(use.getOwner()) && use.getOwner() != fusion;
    });
  for (Operation *op : llvm::reverse(group.ops))
    op->erase();
}

struct SinterFusionPass : sinter::impl::SinterFusionBase<SinterFusionPass> {
  using SinterFusionBase::SinterFusionBase;
  SinterFusionPass(const sinter::SinterFusionOptions &options, sinter::fusion::FusionRules rules)
      : SinterFusionBase(options), rules(std::move(rules)) {}

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.getBody().empty())
      return;
    Block &block = function.getBody().front();
    copyScalarsPerReader(block, rules);
    Grouping grouping(explain, rules);
    grouping.run(block);
    grouping.recomputeInConsumers();
    OpBuilder builder(&getContext());
    for (Group &group : grouping.groups())
      if (!group.dead && !group.ops.empty())
        outline(group, builder);
    // Outlining puts a fusion where its last op was; users of its earlier
    // results may sit before that point, so restore a valid order.
    if (!sortTopologically(&block)) {
      function.emitError() << "sinter-fusion: the fused function has a cycle between kernels "
                              "(a bug in the fusion driver)";
      return signalPassFailure();
    }
    // Constants now used only inside fusions are dead.
    for (Operation &op : llvm::make_early_inc_range(block))
      if (isa<ConstantOp>(op) && op.use_empty())
        op.erase();
  }

  /// What the target says (Note [Fusion asks the target]); none from
  /// `sinter-opt`.
  sinter::fusion::FusionRules rules;
};

} // namespace

std::unique_ptr<mlir::Pass> sinter::passes::createSinterFusion(const SinterFusionOptions &options,
                                                               fusion::FusionRules rules) {
  return std::make_unique<SinterFusionPass>(options, std::move(rules));
}
