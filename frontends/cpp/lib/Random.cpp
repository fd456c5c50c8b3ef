//===- Random.cpp - the generator's state and random tensors --------------===//
#include "Step.h"
#include "TensorImpl.h"
#include "common/philox.h"
#include "sinter/Error.h"

#include "Format.h"

#include <atomic>

namespace sinter {
namespace {
std::atomic<uint64_t> globalSeed{0x5EED5EEDull};
std::atomic<uint64_t> nextStream{0};
} // namespace

void manual_seed(uint64_t seed) {
  globalSeed.store(seed);
  nextStream.store(0);
}

RngState get_rng_state() { return {globalSeed.load(), nextStream.load()}; }

void set_rng_state(const RngState &state) {
  globalSeed.store(state.seed);
  nextStream.store(state.stream);
}

static Tensor random(const char *op, const Shape &shape, DType dtype, uint8_t kind, Loc loc) {
  detail::checkShape(op, shape, loc);
  SINTER_CHECK(isFloatingPoint(dtype), loc,
               cat(op, ": dtype must be floating point, got ", name(dtype)));
  lazy::Attrs attrs;
  attrs.kind = kind;
  // The key is data, not an attribute: every step draws new numbers from the
  // same compiled program.
  uint64_t seed = globalSeed.load(), stream = nextStream.fetch_add(1);
  int64_t key = static_cast<int64_t>(kernels::randomKey(seed, stream));
  Tensor keyData = from_vector<int64_t>({key}, {}, DType::i64, loc);
  // keyData is data (no step replaces its node) and no other thread has it.
  lazy::NodePtr keyNode = detail::nodeOf(keyData);
  keyNode->randomStream = runtime::RandomKeyStream{.seed = seed, .stream = stream};
  return detail::record(lazy::Op::Random, std::move(attrs), {std::move(keyNode)}, shape, dtype,
                        keyData.device(), loc);
}

Tensor rand(const Shape &shape, DType dtype, Loc loc) {
  return random("rand", shape, dtype, 0, loc);
}
Tensor randn(const Shape &shape, DType dtype, Loc loc) {
  return random("randn", shape, dtype, 1, loc);
}

} // namespace sinter
