//===- Optimizer.cpp - sinter::optim --------------------------------------===//
//
// Updates read like their definitions in torch.optim; every op records the
// caller's line of step(). The update runs under NoGradGuard and writes the
// parameters in place.
//
//===----------------------------------------------------------------------===//
#include "sinter/optim/Optimizer.h"

#include "../Format.h"
#include "../ops/Primitives.h"
#include "sinter/Distributed.h"
#include "sinter/Error.h"
#include "sinter/lazy/Node.h"
#include "sinter/runtime/Environment.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <numbers>
#include <tuple>

namespace sinter::optim {
namespace {
/// A hyperparameter that changes between steps (the learning rate under a
/// schedule, Adam's bias corrections) enters the graph as data, not as a
/// constant: the step's structure then stays the same and its compiled
/// program is reused (Note [Graph structure]). One step makes one data
/// scalar per distinct value and dtype.
class StepScalars {
public:
  using Formula = runtime::StepScalarFormula;
  explicit StepScalars(Loc loc) : loc_(loc) {}
  /// The scalar `formula` gives at optimizer step `t` with learning rate
  /// `lr`, as data of `dtype` that records its formula (Note [Step scalars
  /// as formulas]); one per formula and value within a step.
  const Tensor &operator()(Formula formula, double lr, int64_t t, DType dtype) {
    double value = formula.at(lr, t);
    auto [it, inserted] =
        scalars_.try_emplace({static_cast<int>(formula.kind), formula.parameter, value, dtype});
    if (inserted) {
      it->second = from_vector<double>({value}, {}, dtype, loc_);
      lazy::node_of(it->second)->formula = formula;
    }
    return it->second;
  }

private:
  Loc loc_;
  std::map<std::tuple<int, double, double, DType>, Tensor> scalars_;
};
} // namespace

Optimizer::Optimizer(std::vector<Tensor> params, double lr, Loc loc)
    : params_(std::move(params)), lr_(lr) {
  SINTER_CHECK(!params_.empty(), loc, "optimizer: got an empty parameter list");
  SINTER_CHECK(lr >= 0, loc, cat("optimizer: learning rate must be >= 0, got ", lr));
  for (size_t i = 0; i < params_.size(); ++i)
    SINTER_CHECK(params_[i].defined() && params_[i].requires_grad(), loc,
                 cat("optimizer: parameter #", i, " does not require grad"));
}

namespace {

/// The parameter index and the state's name in "<index>.<name>".
std::pair<size_t, std::string> stateKey(const std::string &key, size_t parameters, Loc loc) {
  size_t dot = key.find('.');
  size_t index = 0;
  bool digits = dot != std::string::npos && dot > 0;
  for (size_t k = 0; digits && k < dot; ++k)
    digits = std::isdigit(static_cast<unsigned char>(key[k])) != 0;
  if (digits) {
    auto [end, error] = std::from_chars(key.data(), key.data() + dot, index);
    digits = error == std::errc() && end == key.data() + dot; // not too many digits either
  }
  SINTER_CHECK(digits && index < parameters, loc,
               cat("load_state_dict: '", key,
                   "' is not \"<parameter index>.<name>\" with an index below ", parameters));
  return {index, key.substr(dot + 1)};
}

/// `value` as the state of parameter `p`: same shape and dtype.
Tensor stateLike(const Tensor &value, const Tensor &p, const std::string &key, Loc loc) {
  SINTER_CHECK(value.defined() && value.shape() == p.shape() && value.dtype() == p.dtype(), loc,
               cat("load_state_dict: '", key, "' has shape ",
                   value.defined() ? toString(value.shape()) : std::string("(undefined)"), " ",
                   value.defined() ? name(value.dtype()) : "", ", the parameter is ",
                   toString(p.shape()), " ", name(p.dtype())));
  return value.detach();
}

[[noreturn]] void unknownState(const std::string &key, const char *optimizer, const char *names,
                               Loc loc) {
  throwError(
      cat("load_state_dict: unknown entry '", key, "' for ", optimizer, " (expected ", names, ")"),
      loc);
}

} // namespace

void Optimizer::load_state_dict(const State &state, Loc loc) {
  SINTER_CHECK(
      state.empty(), loc,
      cat("load_state_dict: this optimizer keeps no state, got '", state.front().first, "'"));
}

void Optimizer::zero_grad() {
  for (Tensor &p : params_)
    p.set_grad(Tensor());
}

SGD::SGD(std::vector<Tensor> params, SGDOptions options, Loc loc)
    : Optimizer(std::move(params), options.lr, loc), options_(options), momentum_(params_.size()) {
  SINTER_CHECK(options.momentum >= 0 && options.weight_decay >= 0, loc,
               "SGD: momentum and weight_decay must be >= 0");
  SINTER_CHECK(!options.nesterov || (options.momentum > 0 && options.dampening == 0), loc,
               "SGD: Nesterov momentum requires a momentum and zero dampening");
}

std::map<std::string, double> SGD::hyperparameters() const {
  return {{"lr", lr_},
          {"momentum", options_.momentum},
          {"dampening", options_.dampening},
          {"weight_decay", options_.weight_decay},
          {"nesterov", options_.nesterov ? 1.0 : 0.0}};
}

void SGD::step(Loc loc) {
  NoGradGuard noGrad;
  PhaseGuard phase(lazy::Phase::Update);
  StepScalars stepScalar(loc);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor &p = params_[i];
    Tensor g = p.grad();
    if (!g.defined())
      continue;
    if (options_.weight_decay != 0)
      g = g + Operand(p * Operand(options_.weight_decay, loc), loc);
    if (options_.momentum != 0) {
      Tensor &buf = momentum_[i];
      buf = buf.defined() ? buf * Operand(options_.momentum, loc) +
                                Operand(g * Operand(1 - options_.dampening, loc), loc)
                          : g;
      g = options_.nesterov ? g + Operand(buf * Operand(options_.momentum, loc), loc) : buf;
    }
    p.copy_(p - Operand(g * Operand(stepScalar({StepScalars::Formula::Kind::LearningRate}, lr_, 0,
                                               p.dtype()),
                                    loc),
                        loc),
            loc);
  }
}

Adam::Adam(std::vector<Tensor> params, AdamOptions options, Loc loc)
    : Adam(std::move(params), options, false, loc) {}

Adam::Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled, Loc loc)
    : Optimizer(std::move(params), options.lr, loc), options_(options), decoupled_(decoupled),
      steps_(params_.size(), 0), exp_avg_(params_.size()), exp_avg_sq_(params_.size()) {
  SINTER_CHECK(
      options.beta1 >= 0 && options.beta1 < 1 && options.beta2 >= 0 && options.beta2 < 1, loc,
      cat("Adam: betas must be in [0, 1), got (", options.beta1, ", ", options.beta2, ")"));
  SINTER_CHECK(options.eps >= 0 && options.weight_decay >= 0, loc,
               "Adam: eps and weight_decay must be >= 0");
}

std::map<std::string, double> Adam::hyperparameters() const {
  return {{"lr", lr_},
          {"beta1", options_.beta1},
          {"beta2", options_.beta2},
          {"eps", options_.eps},
          {"weight_decay", options_.weight_decay}};
}

namespace {

/// One parameter's (or one shard's) Adam update at step `t`: `m` and `v`
/// advanced, the new values of `p` returned.
Tensor adamUpdate(const AdamOptions &options, bool decoupled, double lr, const Tensor &p, Tensor g,
                  Tensor &m, Tensor &v, int64_t t, StepScalars &stepScalar, Loc loc) {
  using Kind = StepScalars::Formula::Kind;
  Tensor weights = p;
  if (options.weight_decay != 0) {
    if (decoupled)
      weights = p * Operand(stepScalar({Kind::DecoupledWeightDecay, options.weight_decay}, lr, t,
                                       p.dtype()),
                            loc);
    else
      g = g + Operand(p * Operand(options.weight_decay, loc), loc);
  }
  if (!m.defined()) {
    m = prim::fullLike(p, 0.0, loc); // on the parameter's device
    v = prim::fullLike(p, 0.0, loc);
  }
  m = m * Operand(options.beta1, loc) + Operand(g * Operand(1 - options.beta1, loc), loc);
  v = v * Operand(options.beta2, loc) +
      Operand(g * Operand(g, loc) * Operand(1 - options.beta2, loc), loc);
  Tensor denominator =
      sqrt(v * Operand(stepScalar({Kind::AdamSecondMomentScale, options.beta2}, lr, t, p.dtype()),
                       loc),
           loc) +
      Operand(options.eps, loc);
  Tensor update = m *
                  Operand(stepScalar({Kind::AdamStepSize, options.beta1}, lr, t, p.dtype()), loc) /
                  Operand(denominator, loc);
  return weights - Operand(update, loc);
}

/// The sum of the squares of every defined tensor of `grads`, in f32;
/// undefined when none is.
Tensor sumOfSquares(const std::vector<Tensor> &grads, Loc loc) {
  Tensor total;
  for (const Tensor &g : grads) {
    if (!g.defined())
      continue;
    Tensor squares = (g * Operand(g, loc)).sum({}, false, loc).to(DType::f32, loc);
    total = total.defined() ? total + Operand(squares, loc) : squares;
  }
  return total;
}

/// The factor clip_grad_norm_ scales gradients by, from their L2 norm:
/// min(1, max_norm / (norm + 1e-6)), as PyTorch.
Tensor clipScale(const Tensor &norm, double maxNorm, Loc loc) {
  return minimum(Scalar(maxNorm, loc) / (norm + Operand(1e-6, loc)), ones({}, DType::f32, loc),
                 loc);
}

/// Elements of a tensor of `n` a rank keeps when `ranks` share it.
int64_t shardOf(int64_t n, int64_t ranks) { return (n + ranks - 1) / ranks; }

/// `x` flattened and padded with zeros to `ranks` slices of shardOf.
Tensor paddedFlat(const Tensor &x, int64_t ranks, Loc loc) {
  int64_t n = x.numel(), padded = shardOf(n, ranks) * ranks;
  Tensor flat = x.reshape({-1}, loc);
  if (padded > n)
    flat = prim::concat({flat, zeros({padded - n}, x.dtype(), loc)}, 0, loc);
  return flat;
}

/// The r-th of `ranks` slices of paddedFlat(x): the same ops on every rank,
/// only the slice's offset differs, so that every rank's step is fused and
/// scheduled alike.
Tensor shardOfTensor(const Tensor &x, int64_t ranks, int64_t rank, Loc loc) {
  int64_t shard = shardOf(x.numel(), ranks);
  return paddedFlat(x, ranks, loc).slice(0, rank * shard, (rank + 1) * shard, 1, loc);
}

} // namespace

void Adam::step(Loc loc) {
  if (options_.shard_state)
    return stepSharded(loc);
  if (options_.max_grad_norm > 0)
    clip_grad_norm_(params_, options_.max_grad_norm, loc);
  NoGradGuard noGrad;
  PhaseGuard phase(lazy::Phase::Update);
  StepScalars stepScalar(loc);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor &p = params_[i];
    Tensor g = p.grad();
    if (!g.defined())
      continue;
    int64_t t = ++steps_[i];
    p.copy_(adamUpdate(options_, decoupled_, lr_, p, g, exp_avg_[i], exp_avg_sq_[i], t, stepScalar,
                       loc),
            loc);
  }
}

void Adam::stepSharded(Loc loc) {
  NoGradGuard noGrad;
  PhaseGuard phase(lazy::Phase::Update);
  const bool group = distributed::is_initialized();
  const int64_t ranks = distributed::get_world_size(), rank = distributed::get_rank();
  // The parameters with a gradient, in buckets of one dtype up to the
  // gradient buckets' size (SINTER_BUCKET_MB): one reduce-scatter and one
  // all-gather a bucket, not a parameter.
  const auto cap = static_cast<int64_t>(runtime::environment().bucket_mb * (1 << 20));
  std::vector<std::vector<size_t>> buckets;
  int64_t bytes = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor &p = params_[i];
    if (!p.grad().defined())
      continue;
    int64_t size = shardOf(p.numel(), ranks) * ranks * static_cast<int64_t>(elementSize(p.dtype()));
    if (buckets.empty() || bytes + size > cap ||
        params_[buckets.back().front()].dtype() != p.dtype())
      buckets.emplace_back(), bytes = 0;
    buckets.back().push_back(i);
    bytes += size;
  }
  // Each bucket's gradients as `ranks` rows, each the row's slice of every
  // gradient (flattened and padded) side by side: reduce-scattered, rank r
  // receives its slice of each, reduced.
  std::vector<Tensor> grads(params_.size());
  for (const std::vector<size_t> &bucket : buckets) {
    std::vector<Tensor> rows;
    for (size_t i : bucket)
      rows.push_back(paddedFlat(params_[i].grad(), ranks, loc)
                         .reshape({ranks, shardOf(params_[i].numel(), ranks)}, loc));
    Tensor flat = (rows.size() == 1 ? rows[0] : prim::concat(rows, 1, loc)).reshape({-1}, loc);
    Tensor mine =
        group ? distributed::reduce_scatter(flat, distributed::ReduceOp::Mean, loc) : flat;
    int64_t offset = 0;
    for (size_t i : bucket) {
      int64_t shard = shardOf(params_[i].numel(), ranks);
      grads[i] = bucket.size() == 1 ? mine : mine.slice(0, offset, offset + shard, 1, loc);
      offset += shard;
    }
  }
  if (options_.max_grad_norm > 0) {
    // The norm of all the reduced gradients: each rank's sum of squares of
    // its slices (the padding adds nothing), summed over the ranks.
    Tensor squares = sumOfSquares(grads, loc);
    if (!squares.defined())
      return;
    if (group)
      distributed::all_reduce(squares, distributed::ReduceOp::Sum, loc);
    Tensor scale = clipScale(sqrt(squares, loc), options_.max_grad_norm, loc);
    for (Tensor &g : grads)
      if (g.defined())
        g = g * Operand(scale.to(g.dtype(), loc), loc);
  }
  StepScalars stepScalar(loc);
  for (const std::vector<size_t> &bucket : buckets) {
    std::vector<Tensor> updated;
    for (size_t i : bucket) {
      Tensor mine = shardOfTensor(params_[i].detach(), ranks, rank, loc);
      updated.push_back(adamUpdate(options_, decoupled_, lr_, mine, grads[i], exp_avg_[i],
                                   exp_avg_sq_[i], ++steps_[i], stepScalar, loc));
    }
    // Every rank's updated slices, as `ranks` rows of the bucket's slices.
    Tensor next = updated.size() == 1 ? updated[0] : prim::concat(updated, 0, loc);
    Tensor all = group ? distributed::all_gather(next, loc) : next;
    all = all.reshape({ranks, next.numel()}, loc);
    int64_t offset = 0;
    for (size_t i : bucket) {
      Tensor &p = params_[i];
      int64_t shard = shardOf(p.numel(), ranks);
      Tensor whole = (bucket.size() == 1 ? all : all.slice(1, offset, offset + shard, 1, loc))
                         .reshape({-1}, loc);
      if (whole.numel() > p.numel())
        whole = whole.slice(0, 0, p.numel(), 1, loc);
      p.copy_(whole.reshape(p.shape(), loc), loc);
      offset += shard;
    }
  }
}

Tensor Adam::gathered(const Tensor &shard, size_t i, Loc loc) const {
  const Tensor &p = params_[i];
  Tensor all = distributed::is_initialized() ? distributed::all_gather(shard, loc) : shard;
  if (all.numel() > p.numel())
    all = all.slice(0, 0, p.numel(), 1, loc);
  return all.reshape(params_[i].shape(), loc);
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions o, Loc loc)
    : Adam(std::move(params),
           AdamOptions{.lr = o.lr,
                       .beta1 = o.beta1,
                       .beta2 = o.beta2,
                       .eps = o.eps,
                       .weight_decay = o.weight_decay,
                       .shard_state = o.shard_state,
                       .max_grad_norm = o.max_grad_norm},
           true, loc) {}

Tensor clip_grad_norm_(const std::vector<Tensor> &params, double max_norm, Loc loc) {
  SINTER_CHECK(max_norm > 0, loc, cat("clip_grad_norm_: max_norm must be > 0, got ", max_norm));
  NoGradGuard noGrad;
  std::vector<Tensor> grads;
  for (const Tensor &p : params)
    grads.push_back(p.grad());
  Tensor total = sumOfSquares(grads, loc);
  if (!total.defined())
    return zeros({}, DType::f32, loc);
  Tensor norm = sqrt(total, loc);
  Tensor scale = clipScale(norm, max_norm, loc);
  for (const Tensor &p : params)
    if (Tensor g = p.grad(); g.defined())
      p.set_grad(g * Operand(scale.to(g.dtype(), loc), loc));
  return norm;
}

Optimizer::State SGD::state_dict() const {
  State state;
  for (size_t i = 0; i < params_.size(); ++i)
    if (momentum_[i].defined())
      state.emplace_back(cat(i, ".momentum_buffer"), momentum_[i]);
  return state;
}

void SGD::load_state_dict(const State &state, Loc loc) {
  std::vector<Tensor> momentum(params_.size());
  for (const auto &[key, value] : state) {
    auto [i, entry] = stateKey(key, params_.size(), loc);
    if (entry != "momentum_buffer")
      unknownState(key, "SGD", "momentum_buffer", loc);
    momentum[i] = stateLike(value, params_[i], key, loc);
  }
  momentum_ = std::move(momentum);
}

Optimizer::State Adam::state_dict() const {
  State state;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (steps_[i] == 0)
      continue;
    state.emplace_back(cat(i, ".step"), from_vector<int64_t>({steps_[i]}, {}));
    if (options_.shard_state) {
      Loc loc = Loc::current();
      state.emplace_back(cat(i, ".exp_avg"), gathered(exp_avg_[i], i, loc));
      state.emplace_back(cat(i, ".exp_avg_sq"), gathered(exp_avg_sq_[i], i, loc));
      continue;
    }
    state.emplace_back(cat(i, ".exp_avg"), exp_avg_[i]);
    state.emplace_back(cat(i, ".exp_avg_sq"), exp_avg_sq_[i]);
  }
  return state;
}

void Adam::load_state_dict(const State &state, Loc loc) {
  std::vector<int64_t> steps(params_.size(), 0);
  std::vector<Tensor> exp_avg(params_.size()), exp_avg_sq(params_.size());
  for (const auto &[key, value] : state) {
    auto [i, entry] = stateKey(key, params_.size(), loc);
    if (entry == "step") {
      SINTER_CHECK(value.defined() && value.numel() == 1 && !isFloatingPoint(value.dtype()), loc,
                   cat("load_state_dict: '", key, "' must be one integer"));
      steps[i] = value.item<int64_t>();
      SINTER_CHECK(steps[i] > 0, loc,
                   cat("load_state_dict: '", key, "' must be positive, got ", steps[i]));
    } else if (entry == "exp_avg") {
      exp_avg[i] = stateLike(value, params_[i], key, loc);
    } else if (entry == "exp_avg_sq") {
      exp_avg_sq[i] = stateLike(value, params_[i], key, loc);
    } else {
      unknownState(key, "Adam", "step, exp_avg, exp_avg_sq", loc);
    }
  }
  for (size_t i = 0; i < params_.size(); ++i)
    SINTER_CHECK((steps[i] > 0) == exp_avg[i].defined() &&
                     exp_avg[i].defined() == exp_avg_sq[i].defined(),
                 loc,
                 cat("load_state_dict: parameter ", i,
                     " needs all of step, exp_avg and exp_avg_sq or none"));
  if (options_.shard_state) {
    // This rank's slice of each whole tensor (Note [Sharded optimizer state]).
    const int64_t ranks = distributed::get_world_size(), rank = distributed::get_rank();
    for (size_t i = 0; i < params_.size(); ++i) {
      if (steps[i] == 0)
        continue;
      exp_avg[i] = shardOfTensor(exp_avg[i], ranks, rank, loc);
      exp_avg_sq[i] = shardOfTensor(exp_avg_sq[i], ranks, rank, loc);
    }
  }
  steps_ = std::move(steps);
  exp_avg_ = std::move(exp_avg);
  exp_avg_sq_ = std::move(exp_avg_sq);
}

LRScheduler::LRScheduler(Optimizer &optimizer) : optimizer_(optimizer), base_lr_(optimizer.lr()) {}

double LRScheduler::lr_at(int64_t step) const { return schedule().at(step); }

void LRScheduler::step() {
  ++step_;
  optimizer_.set_lr(lr_at(step_));
}

void LRScheduler::set_last_step(int64_t step) {
  SINTER_CHECK(step >= 0, Loc::current(), cat("set_last_step: step must be >= 0, got ", step));
  step_ = step;
  optimizer_.set_lr(lr_at(step));
}

LinearWarmup::LinearWarmup(Optimizer &optimizer, int64_t warmup_steps)
    : LRScheduler(optimizer), warmup_steps_(warmup_steps) {
  SINTER_CHECK(warmup_steps >= 0, Loc::current(), "LinearWarmup: warmup_steps must be >= 0");
  optimizer.set_lr(lr_at(0));
}

runtime::Schedule LinearWarmup::schedule() const {
  return {.kind = runtime::Schedule::Kind::LinearWarmup,
          .baseLr = base_lr_,
          .warmupSteps = warmup_steps_};
}

WarmupCosine::WarmupCosine(Optimizer &optimizer, int64_t warmup_steps, int64_t total_steps,
                           double min_lr)
    : LRScheduler(optimizer), warmup_steps_(warmup_steps), total_steps_(total_steps),
      min_lr_(min_lr) {
  SINTER_CHECK(warmup_steps >= 0 && total_steps > warmup_steps, Loc::current(),
               cat("WarmupCosine: needs 0 <= warmup_steps < total_steps, got ", warmup_steps,
                   " and ", total_steps));
  optimizer.set_lr(lr_at(0));
}

runtime::Schedule WarmupCosine::schedule() const {
  return {.kind = runtime::Schedule::Kind::WarmupCosine,
          .baseLr = base_lr_,
          .warmupSteps = warmup_steps_,
          .totalSteps = total_steps_,
          .minLr = min_lr_};
}

} // namespace sinter::optim
