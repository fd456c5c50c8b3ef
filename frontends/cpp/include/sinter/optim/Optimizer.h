//===- Optimizer.h - sinter::optim: optimizers and learning-rate schedules ===//
//
// As torch.optim: an optimizer holds parameter handles and per-parameter
// state; step() records the update lazily and writes it into the parameters
// in place (copy_), so the update joins the training step's graph and
// parameters and optimizer state can be donated by the compiled path.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_OPTIM_OPTIMIZER_H
#define SINTER_OPTIM_OPTIMIZER_H

#include "sinter/Tensor.h"
#include "sinter/runtime/StepScalars.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sinter::optim {

class Optimizer {
public:
  Optimizer(std::vector<Tensor> params, double lr, Loc loc);
  virtual ~Optimizer() = default;
  /// Updates every parameter that has a gradient.
  virtual void step(Loc loc = Loc::current()) = 0;
  /// Clears the gradients (sets them to none, as PyTorch's default).
  void zero_grad();
  double lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }
  /// What an artifact's manifest says of it: "sgd", "adam", "adamw" (""
  /// for another optimizer), and its hyperparameters by torch.optim's names.
  virtual std::string kind() const { return ""; }
  virtual std::map<std::string, double> hyperparameters() const { return {{"lr", lr_}}; }
  const std::vector<Tensor> &params() const { return params_; }

  using State = std::vector<std::pair<std::string, Tensor>>;
  /// The per-parameter state, named as in torch.optim's state_dict():
  /// "<parameter index>.<name>" (SGD: momentum_buffer; Adam(W): step (an i64
  /// scalar), exp_avg, exp_avg_sq). Parameters not stepped yet have none.
  virtual State state_dict() const { return {}; }
  /// Restores what state_dict() returned (from the same parameter list):
  /// an unknown name, a parameter index out of range or a shape that is not
  /// the parameter's is an error naming the entry.
  virtual void load_state_dict(const State &state, Loc loc = Loc::current());

protected:
  std::vector<Tensor> params_;
  double lr_;
};

struct SGDOptions {
  double lr = 0.01;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

/// Stochastic gradient descent with optional (Nesterov) momentum and L2
/// weight decay, as torch.optim.SGD.
class SGD : public Optimizer {
public:
  SGD(std::vector<Tensor> params, SGDOptions options = {}, Loc loc = Loc::current());
  void step(Loc loc = Loc::current()) override;
  std::string kind() const override { return "sgd"; }
  std::map<std::string, double> hyperparameters() const override;
  State state_dict() const override;
  void load_state_dict(const State &state, Loc loc = Loc::current()) override;

private:
  SGDOptions options_;
  std::vector<Tensor> momentum_;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
  /// ZeRO stage 1 (Note [Sharded optimizer state]): step() reduces the
  /// gradients over the ranks itself, and each rank keeps and updates
  /// 1/world of the state. Gradients must not be reduced before.
  bool shard_state = false;
  /// When positive, step() first scales the gradients so that their global
  /// L2 norm is at most this (clip_grad_norm_'s rule; with shard_state, of
  /// the reduced gradients, which only step() sees).
  double max_grad_norm = 0;
};

/// Adam (weight decay added to the gradient), as torch.optim.Adam.
///
/// Note [Sharded optimizer state]
/// ZeRO stage 1 (DeepSpeed's; PyTorch's ZeroRedundancyOptimizer shards by
/// whole parameters instead): with shard_state, step() flattens each
/// gradient and pads it with zeros to a multiple of the world size; rank r
/// keeps the r-th slice of each. The gradients go in buckets (of one dtype,
/// up to SINTER_BUCKET_MB, 25 MiB: Note [Gradient buckets]), each laid out
/// as `world` rows of every gradient's slice side by side and
/// reduce-scattered once (the mean over the ranks: rank r receives row r).
/// Rank r updates its slice of each parameter with its slice of the
/// moments, and one all-gather a bucket brings every rank's updated slices
/// into every rank's parameters. All of it is recorded in the step like any op
/// (sinter.reduce_scatter, sinter.all_gather), so a rank's planned step
/// holds 1/world of the moments; its transients are a bucket's gradients
/// and gathered parameters. Each element's arithmetic is the unsharded update's, so
/// in a world of two (a sum of two values has one order) or with
/// SINTER_DETERMINISTIC_COLLECTIVES, training equals reduce_gradients() +
/// the unsharded step bit for bit. state_dict() returns whole tensors, as
/// the unsharded optimizer (a checkpoint reads back into either, at any
/// world size), by an all-gather: every rank calls it and reads its tensors
/// (or calls mark_step()) at the same point. Without a process group, a
/// world of one.
class Adam : public Optimizer {
public:
  Adam(std::vector<Tensor> params, AdamOptions options = {}, Loc loc = Loc::current());
  void step(Loc loc = Loc::current()) override;
  std::string kind() const override { return decoupled_ ? "adamw" : "adam"; }
  std::map<std::string, double> hyperparameters() const override;
  State state_dict() const override;
  void load_state_dict(const State &state, Loc loc = Loc::current()) override;

protected:
  /// decoupled: AdamW's weight decay (p -= lr * wd * p) instead of Adam's.
  Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled, Loc loc);

private:
  void stepSharded(Loc loc);
  /// Parameter i's state from this rank's `shard` of it: the whole tensor
  /// (an all-gather).
  Tensor gathered(const Tensor &shard, size_t i, Loc loc) const;

  AdamOptions options_;
  bool decoupled_;
  /// Steps taken per parameter (its bias correction), as PyTorch: a parameter
  /// whose first gradient comes late starts its own count.
  std::vector<int64_t> steps_;
  /// With shard_state, this rank's slice of each: the parameter flattened
  /// and padded with zeros to a multiple of the world size.
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
};

/// AdamOptions with AdamW's default weight decay.
struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool shard_state = false; // as AdamOptions
  double max_grad_norm = 0; // as AdamOptions
};

/// Adam with decoupled weight decay (p -= lr * weight_decay * p), as
/// torch.optim.AdamW.
class AdamW : public Adam {
public:
  AdamW(std::vector<Tensor> params, AdamWOptions options = {}, Loc loc = Loc::current());
};

/// Scales the gradients of `params` so that their global L2 norm is at most
/// max_norm; returns the norm before clipping (a lazy scalar tensor).
Tensor clip_grad_norm_(const std::vector<Tensor> &params, double max_norm,
                       Loc loc = Loc::current());

/// A learning-rate schedule: step() once per training step sets the
/// optimizer's lr to lr_at(steps taken). Each kind is a runtime::Schedule
/// (sinter/runtime/StepScalars.h), the formula an ahead-of-time artifact
/// evaluates too (Note [Step scalars as formulas]).
class LRScheduler {
public:
  explicit LRScheduler(Optimizer &optimizer);
  virtual ~LRScheduler() = default;
  void step();
  /// The schedule as data: its kind and numbers.
  virtual runtime::Schedule schedule() const = 0;
  /// The learning rate after `step` calls of step(): schedule().at(step).
  double lr_at(int64_t step) const;
  int64_t last_step() const { return step_; }
  /// Puts the schedule where `step` calls of step() leave it (resuming).
  void set_last_step(int64_t step);

protected:
  Optimizer &optimizer_;
  double base_lr_;
  int64_t step_ = 0;
};

/// lr * (step + 1) / warmup_steps for the first warmup_steps steps, then lr.
class LinearWarmup : public LRScheduler {
public:
  LinearWarmup(Optimizer &optimizer, int64_t warmup_steps);
  runtime::Schedule schedule() const override;

private:
  int64_t warmup_steps_;
};

/// Linear warmup over warmup_steps, then cosine decay to min_lr at
/// total_steps (and min_lr after).
class WarmupCosine : public LRScheduler {
public:
  WarmupCosine(Optimizer &optimizer, int64_t warmup_steps, int64_t total_steps,
               double min_lr = 0.0);
  runtime::Schedule schedule() const override;

private:
  int64_t warmup_steps_, total_steps_;
  double min_lr_;
};

} // namespace sinter::optim

#endif // SINTER_OPTIM_OPTIMIZER_H
