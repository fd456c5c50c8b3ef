//===- Node.h - the lazy graph: one recorded op ---------------------------===//
//
// Note [The lazy graph]
// Recording must cost well under a microsecond and a graph must hash cheaply
// for the executable cache, so the lazy graph is plain C++ data, not MLIR:
// a Node holds its op, attributes, operands (shared, so a graph is a DAG),
// result shape, dtype, device and the user's source location. Nodes are
// immutable once recorded, except that `value` is filled in when the node
// has been computed (and is the whole content of a Data node). The op set is
// that of the `sinter` dialect, so lowering is one op to one op; composite
// ops (softmax, layer_norm, cross_entropy, ...) are recorded as primitives.
//
// This header is the contract between the frontend, which records graphs,
// and the compiler, which lowers them (compiler/lib/Compiler/LowerLazyGraph.cpp);
// it is plain C++ and needs nothing but the dtype, device and shape headers
// (and the step scalars' formulas, sinter/runtime/StepScalars.h).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_LAZY_NODE_H
#define SINTER_LAZY_NODE_H

#include "sinter/DType.h"
#include "sinter/Device.h"
#include "sinter/Shape.h"
#include "sinter/runtime/StepScalars.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

namespace sinter::runtime {
class CudaDevice;
} // namespace sinter::runtime

namespace sinter::lazy {

enum class Op : uint8_t {
  // Sources.
  Data,   // a materialised value (user data, parameters, computed results)
  Full,   // every element = attrs.value
  Iota,   // index along attrs.axis
  Random, // (key: i64 scalar, kernels::randomKey(seed, stream)); attrs.kind: 0 uniform [0,1), 1
          // normal
// Elementwise, of one operand then of two (operands already broadcast to
// one shape and dtype): Note [The op table] in sinter/lazy/Ops.def.
#define SINTER_UNARY_OP(Name, ...) Name,
#define SINTER_BINARY_OP(Name, ...) Name,
#include "sinter/lazy/Ops.def"
  Compare, // attrs.kind: a CompareKind
  Select,  // (pred, on_true, on_false)
  Convert, // to the node's dtype
  // Layout.
  Broadcast, // attrs.dims: operand dim i -> result dim dims[i]
  Reshape,
  Transpose,  // attrs.dims: result dim i = operand dim dims[i]
  Slice,      // attrs.dims start, attrs.dims2 limit, attrs.dims3 step
  Concat,     // along attrs.axis
  Gather,     // (operand, indices) along attrs.axis
  ScatterAdd, // (operand, indices, updates) along attrs.axis
  // Reductions.
  ReduceSum, // over attrs.dims, attrs.flag = keepdim
  ReduceMax, // over attrs.dims, attrs.flag = keepdim
  ArgMax,    // along attrs.axis, attrs.flag = keepdim
  // Contractions and windows (NCHW activations, OIHW filters).
  Matmul, // attrs.flag = transpose lhs, attrs.flag2 = transpose rhs
  Conv2d, // (input, filter); attrs.dims stride, dims2 padding, dims3 dilation, axis groups
  Conv2dBackwardInput,  // (grad_output, filter) -> input shape; attributes as Conv2d
  Conv2dBackwardFilter, // (input, grad_output) -> filter shape; attributes as Conv2d
  Pool2d,               // attrs.kind: 0 max, 1 avg; dims kernel, dims2 stride, dims3 padding
  Pool2dBackward,       // (input, grad_output); attributes as Pool2d
  // Collectives.
  AllReduce, // over the ranks of the process group; attrs.kind: runtime::ReduceOp
  // A 1-D tensor of attrs.axis (the world size) slices reduced over the
  // ranks (attrs.kind: runtime::ReduceOp); rank r gets the r-th slice.
  ReduceScatter,
  // Every rank's 1-D tensor, in rank order (attrs.axis: the world size).
  AllGather,
};

/// sinter.compare's directions.
enum class CompareKind : uint8_t { eq, ne, lt, le, gt, ge };

/// The op's name in messages and in the dialect ("add", "reduce_sum", ...).
std::string_view name(Op op);

/// The dtypes an elementwise op takes (the `operands` column of
/// sinter/lazy/Ops.def).
enum class Operands : uint8_t {
  Float,   // f32, f16, bf16
  Numeric, // any but bool
  Bool,
  Logical, // bool or an integer
};

/// The dtypes elementwise `op` takes; nullopt for the other ops.
std::optional<Operands> operandsOf(Op op);

/// Whether `operands` includes `dtype`.
bool accepts(Operands operands, DType dtype);

/// "a floating-point", "a numeric (not bool)", ...: what `operands` asks
/// for, in messages.
std::string_view describe(Operands operands);

/// Attributes of every op kind; each op uses the fields its comment in Op
/// names and leaves the rest at their defaults (so hashing can read all).
struct Attrs {
  std::vector<int64_t> dims;
  std::vector<int64_t> dims2;
  std::vector<int64_t> dims3;
  int64_t axis = 0;
  uint64_t seed = 0;
  double value = 0;
  uint8_t kind = 0;
  bool flag = false;
  bool flag2 = false;
};

/// Note [Two forms of a value]
/// The computed elements of a node, in one of two forms: doubles already
/// rounded to the dtype (f16/bf16/f32 rounding, integer wrap-around, bool as
/// 0/1), which the reference executor reads and writes, or the dtype's bytes
/// in memory (little-endian, a bool per byte, 64-byte aligned), which
/// compiled programs read and write without a copy. A value is made in one
/// form; the other is converted on first use and kept. Both forms hold the
/// same numbers, so which one a value was made in is never observable.
///
/// The bytes have a third home: a CUDA device's memory. A step on a CUDA
/// device makes its results there and reads its arguments there, so that a
/// model's parameters and optimizer state stay on the device from step to
/// step; a value made on the host is copied to the device by the first step
/// that reads it (and kept), and a value made on the device is copied to
/// the host when the host first reads it (item(), to_vector(), a
/// checkpoint, a step on the CPU). One device per value: a step on another
/// is refused by the frontend before it runs.
class Value {
public:
  /// Bytes of a dtype, 64-byte aligned, from runtime::HostAllocator.
  using Bytes = std::shared_ptr<uint8_t[]>;
  static Bytes allocate(int64_t bytes);
  /// Takes ownership of a block from runtime::HostAllocator.
  static Bytes adopt(void *block);
  /// Memory of a CUDA device, given back to it when the last holder lets go.
  using DeviceBytes = std::shared_ptr<uint8_t>;
  /// `bytes` of `device`'s memory; null, with the reason in `why`, when the
  /// device has none.
  static DeviceBytes allocateOn(runtime::CudaDevice &device, int64_t bytes, std::string &why);

  /// From doubles already rounded to `dtype`.
  Value(std::vector<double> elements, DType dtype);
  /// From `count` elements of `dtype` in `bytes`.
  Value(Bytes bytes, int64_t count, DType dtype);
  /// From `count` elements of `dtype` in `device`'s memory.
  Value(runtime::CudaDevice &device, DeviceBytes bytes, int64_t count, DType dtype);
  Value(const Value &) = delete;
  Value &operator=(const Value &) = delete;

  DType dtype() const { return dtype_; }
  int64_t size() const { return count_; }
  const std::vector<double> &elements() const;
  /// The bytes in host memory (copied from the device at the first call
  /// for a value made there; a copy that fails throws std::runtime_error).
  const uint8_t *bytes() const;
  /// The bytes, shared (kept alive as long as the caller holds them).
  const Bytes &sharedBytes() const;
  /// The bytes in `device`'s memory, copied there at the first call for a
  /// value made elsewhere; null, with the reason in `why`, when the copy
  /// fails or the value is on another device.
  DeviceBytes onDevice(runtime::CudaDevice &device, std::string &why) const;
  /// Whether anything but this value holds its memory (its host bytes or
  /// its device bytes): a step writes a result over a value's memory only
  /// when nothing does (Note [Donation]). Copies nothing from a device (a
  /// value made from doubles gets its bytes).
  bool memoryShared() const;

private:
  DType dtype_;
  int64_t count_;
  mutable std::once_flag elementsOnce_, bytesOnce_;
  mutable std::vector<double> elements_;
  mutable Bytes bytes_;
  const bool madeOnDevice_ = false;
  /// Set once the host form exists (bytes_ is then never written again).
  mutable std::atomic<bool> hostReady_ = false;
  mutable std::mutex deviceMutex_;
  mutable runtime::CudaDevice *device_ = nullptr;
  mutable DeviceBytes deviceBytes_;
};

/// Which part of a training step recorded a node: the memory report sorts
/// what holds memory by it (activations kept for the backward pass,
/// gradients, optimizer state). Set by sinter::PhaseGuard.
enum class Phase : uint8_t { Forward, Backward, Update };

struct Node {
  Node() { live().fetch_add(1, std::memory_order_relaxed); }
  ~Node() { live().fetch_sub(1, std::memory_order_relaxed); }
  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;
  /// Nodes alive in the process (for leak tests).
  static int64_t liveCount() { return live().load(std::memory_order_relaxed); }

  Op op = Op::Data;
  Attrs attrs;
  std::vector<std::shared_ptr<Node>> operands;
  Shape shape;
  DType dtype = DType::f32;
  Device device = Device::cpu();
  std::source_location loc;
  Phase phase = Phase::Forward;
  /// Filled in once computed; always set for Data.
  std::shared_ptr<const Value> value;
  /// For a Data node an optimizer computed from its step count: which
  /// number it is (Note [Step scalars as formulas] in
  /// sinter/runtime/StepScalars.h), carried to the Program's signature.
  /// Not part of the graph's structure.
  std::optional<runtime::StepScalarFormula> formula;
  /// For a random op's key: its seed and stream (Note [Random keys across
  /// steps] in sinter/runtime/StepScalars.h). Not part of the structure.
  std::optional<runtime::RandomKeyStream> randomStream;

private:
  static std::atomic<int64_t> &live() {
    static std::atomic<int64_t> count{0};
    return count;
  }
};

using NodePtr = std::shared_ptr<Node>;

} // namespace sinter::lazy

namespace sinter {
class Tensor;
namespace lazy {
/// The node a tensor currently refers to (its pending op, or its data).
NodePtr node_of(const Tensor &tensor);
} // namespace lazy
} // namespace sinter

#endif // SINTER_LAZY_NODE_H
