//===- CpuLibrary.cpp - the ops fusion leaves alone, as C++ kernels --------===//
//
// Matmul, convolutions, pooling, gather, scatter_add, concat and argmax are
// not fused: on the GPU they are library calls (cuBLASLt, cuDNN). On the CPU
// a matrix product is a library step of the Program (a GEMM descriptor), and
// each of the others a kernel that calls its loops in kernels/cpu/ (the same
// definitions as the reference executor's) with the op's shape as a
// compile-time constant. What stays here are the choices: which library
// multiplies (Note [Which library multiplies]), on how many threads, and
// how a convolution is cut into products.
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/CpuKernel.h"

#include "LibraryOps.h"
#include "sinter/runtime/Environment.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <array>
#include <cstdlib>

using namespace mlir;
using namespace sinter::ir;

namespace sinter::codegen {
namespace {

std::string elementType(Value v) { return cppElementType(v.getType()); }

/// Note [Which library multiplies]
/// oneDNN's sgemm (2.6, Debian 12) is slow on CPUs where it runs its AVX2
/// kernels (no AVX-512) when the left matrix is transposed and the product
/// is large: a weight gradient Xᵀ·dY of [1024 tokens x 1024] by [1024 x 256]
/// ran at 61 GFLOP/s on two threads of a Zen 3 machine, where OpenBLAS 0.3.21
/// (and MKL, under PyTorch) ran at 122-158. Measured there on two threads,
/// single products, row-major, 'T','N' (m x n x k: oneDNN / OpenBLAS
/// GFLOP/s): 1024x256x1024 61 / 122, 256x1024x1024 68 / 141, 4096x256x1024
/// 58 / 100, 1024x256x256 90 / 160, 256x256x1024 85 / 126, 256x256x256
/// 158 / 154. Convolutions' input gradients (Wᵀ times the output gradient)
/// with a small n or k favour oneDNN: 576x1024x64 167 / 129, 4608x16x512
/// 143 / 88; with 256 columns (Note [Images per product]) and 256 output
/// channels they are about even: 1152x256x256 81-83 / 93-97, 2304x256x256
/// 74-98 / 87-89, 4608x256x512 84 / 105. Untransposed products and batches of
/// small matrices are as fast or faster in oneDNN (within 15%), so, where
/// oneDNN runs AVX2 kernels, OpenBLAS takes exactly the single products with
/// a transposed left matrix whose three dimensions are all at least 256;
/// oneDNN the rest.
///
/// Where oneDNN runs its AVX-512 kernels it is faster at every shape of the
/// zoo, transposed or not: on two threads of a Zen 5 machine (AVX-512;
/// OpenBLAS 0.3.21 does not know the CPU and runs its Haswell kernels),
/// 'T','N' 1024x256x1024 370-415 / 210-225, 256x1024x1024 383-400 /
/// 229-243, 4096x256x1024 383-391 / 218-228, 256x256x1024 436-449 /
/// 196-207, and untransposed products 430-520 / 210-260. The same machine
/// with oneDNN capped at AVX2 (DNNL_MAX_CPU_ISA=AVX2) shows the old picture
/// (1024x256x1024 'T','N': 160 / 258). So the choice follows the ISA oneDNN
/// runs (`oneDnnRunsAvx512`: the host's features, capped by
/// DNNL_MAX_CPU_ISA); both libraries run on the kernels' OpenMP threads
/// (OpenBLAS is its OpenMP build).
bool openBlasMultiplies(bool single, bool transposeLhs, int64_t m, int64_t n, int64_t k) {
  return !oneDnnRunsAvx512() && single && transposeLhs && std::min({m, n, k}) >= 256;
}

/// Note [Small products on one thread]
/// A library call that splits its work over OpenMP's threads needs them
/// awake. Between kernels they spin a while (30,000 times), then sleep (Note
/// [OpenMP's idle threads] in runtime/lib/Program.cpp), and waking one took
/// 35-45 us on a 2-core virtual machine: there a [64 x 256] by [256 x 10]
/// product (an MLP's last layer) took 38 us on two threads whose second
/// slept, 2.4 us on two awake ones, and 2.5 us on one. With the threads
/// awake, two win from about 2 MFLOP on (128x128x64: 7.7 us on one, 5.6 on
/// two; 256x256x64: 32 / 23 us). A single product under
/// `kSerialProductFlops` therefore runs on the calling thread: as fast as
/// two when they are awake, and no wake when they are not. Products of a
/// batch already run one per thread.
constexpr double kSerialProductFlops = 1 << 20;

/// Note [Images per product]
/// A convolution multiplies each image's column matrix [Cg*KH*KW, OH*OW]
/// with the filters. Late in a ResNet the images are small (4x4 pixels: 16
/// columns) and a product per image is a thin sgemm that writes the whole
/// filter gradient ([512 x 4608] floats) once per image. So the images of a
/// chunk share one column matrix, side by side, with at least
/// `kColumnsPerProduct` columns where the batch allows: the chunk is the
/// largest divisor of the batch up to ceil(kColumnsPerProduct / (OH*OW)), so
/// every chunk is whole and the products' shapes are known when the kernel
/// is written (a prime batch larger than that bound still multiplies image
/// by image: batches of 8 or 16 are what this is tuned for). Early layers
/// (32x32 pixels: 1024 columns) keep one image per product, and the column
/// matrix stays as large as the largest layer's.
constexpr int64_t kColumnsPerProduct = 256;

/// Filter gradients with fewer filters per group than this are computed
/// transposed (Note [Transposed filter gradients]).
constexpr int64_t kTransposedGradientRows = 128;

int64_t imagesPerProduct(int64_t batch, int64_t pixels) {
  int64_t wanted = std::min(batch, (kColumnsPerProduct + pixels - 1) / pixels);
  int64_t chunk = std::max<int64_t>(wanted, 1);
  while (batch % chunk != 0)
    --chunk;
  return chunk;
}

/// Whether one product of a kernel (not one of a batch run in parallel)
/// runs on the calling thread alone (Note [Small products on one thread]).
bool productOnOneThread(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <
         kSerialProductFlops;
}

/// A convolution's operands by role, its attributes, and the choices its
/// kernel is written with: images per product (Note [Images per product]),
/// the transposed filter gradient (Note [Transposed filter gradients]), the
/// one product per chunk and group (m x n x k), and the scratch buffers
/// those take, in output-slot order after the result.
struct Convolution {
  ArrayRef<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  Value input, filter, output;
  bool forward = false, backwardInput = false, empty = false, transposedGradient = false;
  int64_t chunk = 1, m = 0, n = 0, k = 0;
  std::vector<int64_t> scratch;
};

Convolution convolutionOf(Operation *op) {
  Convolution c;
  ConvolutionOperands operands = convolutionOperands(op);
  c.stride = operands.stride, c.padding = operands.padding, c.dilation = operands.dilation;
  c.groups = operands.groups;
  c.input = operands.input, c.filter = operands.filter, c.output = operands.output;
  auto shapeOf = [](Value v) { return cast<ShapedType>(v.getType()).getShape(); };
  ArrayRef<int64_t> in = shapeOf(c.input), w = shapeOf(c.filter), out = shapeOf(c.output);
  int64_t og = w[0] / c.groups, k = w[1] * w[2] * w[3], p = out[2] * out[3];
  c.forward = isa<Conv2dOp>(op), c.backwardInput = isa<Conv2dBackwardInputOp>(op);
  c.empty = k == 0 || p == 0 || og == 0 || in[0] == 0;
  c.chunk = c.empty ? 1 : imagesPerProduct(in[0], p);
  int64_t n = c.chunk * p;
  // Note [Transposed filter gradients]: with fewer than 128 filters per
  // group (and more rows than filters), the filter gradient is computed
  // transposed, [k x og] = columns · gradientᵀ, into `wt`, and transposed
  // into place after the last chunk. oneDNN splits a product of 64 rows
  // badly over two threads: 'N','T' 64x576x1024 (the first ResNet stage)
  // took 575 us on two threads and 415 on one, 576x64x1024 268 us on two.
  // From 128 rows on both forms run alike (128x576x256 142 / 133 us).
  c.transposedGradient = !c.forward && !c.backwardInput && og < kTransposedGradientRows && k > og;
  bool forward = c.forward, backwardInput = c.backwardInput;
  c.m = forward ? og : backwardInput ? k : c.transposedGradient ? k : og;
  c.n = forward ? n : backwardInput ? n : c.transposedGradient ? og : k;
  c.k = forward ? k : backwardInput ? og : n;
  if (!c.empty) {
    c.scratch.push_back(k * n * 4); // the column matrix
    if (c.chunk > 1)
      c.scratch.push_back(og * n * 4); // the chunk's outputs side by side
    if (c.transposedGradient)
      c.scratch.push_back(c.groups * og * k * 4);
  }
  return c;
}

/// Writes one kernel of an op that fusion leaves alone: a call to its loops
/// in kernels/cpu/ (conv2d.h, pool2d.h, gather.h, concat.h, argmax.h) with
/// the op's shape, and for convolutions the choices made here (Notes
/// [Images per product], [Transposed filter gradients], [Which library
/// multiplies], [Small products on one thread]), as compile-time constants.
class LibraryRenderer {
public:
  LibraryRenderer(llvm::raw_ostream &os) : os(os) {}

  /// Scratch bytes the kernel takes after its results, in output-slot order.
  std::vector<int64_t> scratch;

  LogicalResult render(Operation *op, StringRef name) {
    for (Value v : op->getOperands())
      if (elementType(v).empty())
        return op->emitError() << "the CPU renderer does not support " << v.getType() << " yet";
    std::string body;
    llvm::raw_string_ostream call(body);
    shapeName = (name + "_shape").str();
    os << "\n";
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case<MatmulOp>([&](MatmulOp m) {
              return m.emitError("a matrix product is a library call of the Program (Note "
                                 "[Matrix products as data]), not a kernel");
            })
            .Case<Conv2dOp, Conv2dBackwardInputOp, Conv2dBackwardFilterOp>(
                [&](Operation *c) { return conv(c, call); })
            .Case<Pool2dOp, Pool2dBackwardOp>([&](Operation *p) { return pool(p, call); })
            .Case<GatherOp, ScatterAddOp>([&](Operation *g) { return gather(g, call); })
            .Case<ConcatOp>([&](ConcatOp c) { return concat(c, call); })
            .Case<ArgMaxOp>([&](ArgMaxOp a) { return argmax(a, call); })
            .Default([&](Operation *other) {
              return other->emitError()
                     << "the CPU renderer has no kernel for '" << other->getName() << "'";
            });
    os << "extern \"C\" void " << name << "(const void *const *inputs, void *const *outputs) {\n";
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      os << "  const " << elementType(v) << " *in" << i << " = static_cast<const " << elementType(v)
         << " *>(inputs[" << i << "]);\n";
    for (auto [i, v] : llvm::enumerate(op->getResults()))
      os << "  " << elementType(v) << " *out" << i << " = static_cast<" << elementType(v)
         << " *>(outputs[" << i << "]);\n";
    os << body << "}\n";
    return result;
  }

private:
  static ArrayRef<int64_t> shapeOf(Value v) { return cast<ShapedType>(v.getType()).getShape(); }

  /// The scratch buffer of output slot `slot` as a float pointer, or nullptr.
  std::string scratchSlot(bool present, size_t slot) {
    return present ? "static_cast<float *>(outputs[" + std::to_string(slot) + "])" : "nullptr";
  }

  LogicalResult conv(Operation *op, llvm::raw_ostream &call) {
    Convolution c = convolutionOf(op);
    ArrayRef<int64_t> in = shapeOf(c.input), w = shapeOf(c.filter), out = shapeOf(c.output);
    ArrayRef<int64_t> stride = c.stride, padding = c.padding, dilation = c.dilation;
    int64_t groups = c.groups, chunk = c.chunk;
    bool forward = c.forward, backwardInput = c.backwardInput, empty = c.empty;
    bool transposedGradient = c.transposedGradient, transposeLhs = backwardInput;
    int64_t pm = c.m, pn = c.n, pk = c.k;
    scratch = c.scratch;
    auto flag = [](bool b) { return b ? "true" : "false"; };
    os << "static constexpr sinter_conv2d_shape " << shapeName << " = {/*input*/ " << in[0] << ", "
       << in[1] << ", " << in[2] << ", " << in[3] << ", /*filters*/ " << w[0] << ", " << w[2]
       << ", " << w[3] << ", /*output*/ " << out[2] << ", " << out[3] << ", /*stride*/ "
       << stride[0] << ", " << stride[1] << ", /*padding*/ " << padding[0] << ", " << padding[1]
       << ", /*dilation*/ " << dilation[0] << ", " << dilation[1] << ", /*groups*/ " << groups
       << ",\n    /*images*/ " << chunk << ", /*transposed_gradient*/ " << flag(transposedGradient)
       << ", /*open_blas*/ " << flag(openBlasMultiplies(true, transposeLhs, pm, pn, pk))
       << ", /*one_thread*/ " << flag(productOnOneThread(pm, pn, pk)) << "};\n";
    std::string col = scratchSlot(!empty, 1), aux = scratchSlot(!empty && chunk > 1, 2);
    if (forward)
      call << "  sinter_conv2d<" << shapeName << ">(in0, in1, out0, " << col << ", " << aux
           << ");\n";
    else if (backwardInput) // in0: the output gradient, in1: the filters
      call << "  sinter_conv2d_backward_input<" << shapeName << ">(in0, in1, out0, " << col << ", "
           << aux << ");\n";
    else // in0: the input, in1: the output gradient
      call << "  sinter_conv2d_backward_filter<" << shapeName << ">(in0, in1, out0, " << col << ", "
           << aux << ", " << scratchSlot(transposedGradient, scratch.size()) << ");\n";
    return success();
  }

  LogicalResult pool(Operation *op, llvm::raw_ostream &call) {
    PoolOperands p = poolOperands(op);
    bool backward = p.backward;
    PoolKind kind = p.kind;
    ArrayRef<int64_t> kernel = p.kernel, stride = p.stride, padding = p.padding;
    ArrayRef<int64_t> in = shapeOf(p.input), out = shapeOf(p.output);
    os << "static constexpr sinter_pool2d_shape " << shapeName << " = {/*planes*/ " << in[0] * in[1]
       << ", /*input*/ " << in[2] << ", " << in[3] << ", /*output*/ " << out[2] << ", " << out[3]
       << ", /*kernel*/ " << kernel[0] << ", " << kernel[1] << ", /*stride*/ " << stride[0] << ", "
       << stride[1] << ", /*padding*/ " << padding[0] << ", " << padding[1] << ", /*max*/ "
       << (kind == PoolKind::max ? "true" : "false") << "};\n";
    if (backward) // in0: the input, in1: the output's gradient
      call << "  sinter_pool2d_backward<" << shapeName << ">(in0, in1, out0);\n";
    else
      call << "  sinter_pool2d<" << shapeName << ">(in0, out0);\n";
    return success();
  }

  LogicalResult gather(Operation *op, llvm::raw_ostream &call) {
    bool scatter = isa<ScatterAddOp>(op);
    int64_t axis = scatter ? static_cast<int64_t>(cast<ScatterAddOp>(op).getAxis())
                           : static_cast<int64_t>(cast<GatherOp>(op).getAxis());
    auto [outer, extent, inner] = aroundAxis(shapeOf(op->getOperand(0)), axis);
    int64_t count = ShapedType::getNumElements(shapeOf(op->getOperand(1)));
    call << "  " << (scatter ? "sinter_scatter_add<" : "sinter_gather<") << outer << ", " << count
         << ", " << extent << ", " << inner << ">(in0, in1, " << (scatter ? "in2, " : "")
         << "out0);\n";
    return success();
  }

  LogicalResult concat(ConcatOp op, llvm::raw_ostream &call) {
    int64_t axis = static_cast<int64_t>(op.getDim());
    auto [outer, outExtent, inner] = aroundAxis(shapeOf(op.getResult()), axis);
    int64_t offset = 0;
    for (auto [i, input] : llvm::enumerate(op.getInputs())) {
      int64_t extent = shapeOf(input)[axis];
      call << "  sinter_concat_part<" << outer << ", " << extent << ", " << inner << ", "
           << outExtent << ", " << offset << ">(in" << i << ", out0);\n";
      offset += extent;
    }
    return success();
  }

  LogicalResult argmax(ArgMaxOp op, llvm::raw_ostream &call) {
    auto [outer, extent, inner] =
        aroundAxis(shapeOf(op.getOperand()), static_cast<int64_t>(op.getDim()));
    call << "  sinter_argmax<" << outer << ", " << extent << ", " << inner << ">(in0, out0);\n";
    return success();
  }

  llvm::raw_ostream &os;
  std::string shapeName; ///< of the kernel's shape constant
};

} // namespace

bool oneDnnCapKeepsAvx512(llvm::StringRef cap) {
  // The values oneDNN 2.6 accepts below avx512_core; anything else (the
  // AVX-512 and AMX levels, ALL, an unknown value, which oneDNN ignores)
  // keeps its AVX-512 kernels.
  for (const char *below : {"SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_MIC", "AVX512_MIC_4OPS"})
    if (cap.trim().equals_insensitive(below))
      return false;
  return true;
}

// Not by asking oneDNN (dnnl_get_effective_cpu_isa): loading it here would
// load OpenMP before CpuExecutable::load sets how its idle threads wait and
// before a tool sets OMP_NUM_THREADS, and OpenMP reads both once, when it
// loads.
bool oneDnnRunsAvx512() {
  static const bool avx512 = [] {
    // oneDNN's avx512_core: AVX-512 F, CD, BW, DQ and VL.
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    for (const char *feature : {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})
      if (!features.lookup(feature))
        return false;
    // oneDNN reads ONEDNN_MAX_CPU_ISA, else DNNL_MAX_CPU_ISA.
    const std::string &cap = runtime::environment().onednn_max_cpu_isa;
    return cap.empty() || oneDnnCapKeepsAvx512(cap);
  }();
  return avx512;
}

bool isLibraryKernel(Operation *op) {
  return isa<MatmulOp, Conv2dOp, Conv2dBackwardInputOp, Conv2dBackwardFilterOp, Pool2dOp,
             Pool2dBackwardOp, GatherOp, ScatterAddOp, ConcatOp, ArgMaxOp>(op);
}

std::optional<LibraryStep> cpuLibraryStep(Operation *op) {
  auto matmul = dyn_cast<MatmulOp>(op);
  if (!matmul || op->getParentOfType<FusionOp>())
    return std::nullopt;
  auto shapeOf = [](Value v) { return cast<ShapedType>(v.getType()).getShape(); };
  ArrayRef<int64_t> a = shapeOf(matmul.getLhs()), b = shapeOf(matmul.getRhs()),
                    c = shapeOf(matmul.getResult());
  int64_t rank = static_cast<int64_t>(c.size()), m = c[rank - 2], n = c[rank - 1];
  int64_t k = matmul.getTransposeLhs() ? a[a.size() - 2] : a[a.size() - 1];
  int64_t batch = m * n == 0 ? 0 : ShapedType::getNumElements(c) / (m * n);
  bool shared = b.size() == 2 && rank > 2;
  // A batch of row-major matrices times one shared matrix is one matrix of
  // batch * m rows times it: one large product (oneDNN's threads, its best
  // blocking) instead of `batch` small ones (measured 77 -> 130 GFLOP/s for
  // 8 x 128 x 1024 x 256 on two cores).
  if (shared && !matmul.getTransposeLhs()) {
    m *= batch;
    batch = 1;
  }
  LibraryStep step;
  step.gemm = runtime::gemmOfRowMajor(matmul.getTransposeLhs(), matmul.getTransposeRhs(), m, n, k,
                                      batch, shared);
  // A batch of several runs its matrices on all threads, each product on
  // one; one matrix alone uses the library's threads, or only the calling
  // thread when small.
  bool single = batch == 1;
  step.host.openBlas = openBlasMultiplies(single, matmul.getTransposeLhs(), m, n, k);
  step.host.oneThread = single && productOnOneThread(m, n, k);
  step.operands = {1, 0}; // A is the right operand (Note [Matrix products as data])
  return step;
}

std::vector<int64_t> cpuLibraryScratch(Operation *op) {
  if (isa<Conv2dOp, Conv2dBackwardInputOp, Conv2dBackwardFilterOp>(op))
    return convolutionOf(op).scratch;
  return {};
}

LogicalResult renderCpuLibraryKernel(Operation *op, StringRef name, llvm::raw_ostream &os,
                                     std::vector<int64_t> *scratch) {
  LibraryRenderer renderer(os);
  LogicalResult result = renderer.render(op, name);
  if (scratch)
    *scratch = renderer.scratch;
  return result;
}

} // namespace sinter::codegen
