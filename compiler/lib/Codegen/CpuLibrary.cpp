//===- CpuLibrary.cpp - the ops fusion leaves alone, as C++ kernels --------===//
//
// Matmul, convolutions, pooling, gather, scatter_add, concat and argmax are
// not fused: on the GPU they are library calls (cuBLASLt, cuDNN). On the CPU
// they are rendered here as plain loops with the kernels' calling convention,
// the same definitions as the reference executor's, so that every op of a
// step can run compiled; matmul and convolution (as im2col) call oneDNN's
// sgemm, or OpenBLAS's (Note [Which library multiplies]).
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/CpuKernel.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

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

/// One row-major C = alpha op(A) op(B) + beta C, by the library of Note
/// [Which library multiplies], on one thread when small (Note [Small products
/// on one thread]); the pointers and `beta` are C++ expressions. `single`:
/// the product is not one of a batch run in parallel.
std::string sgemm(bool single, bool transposeA, bool transposeB, int64_t m, int64_t n, int64_t k,
                  const std::string &a, int64_t lda, const std::string &b, int64_t ldb,
                  const std::string &beta, const std::string &c, int64_t ldc) {
  std::string call;
  llvm::raw_string_ostream os(call);
  bool serial =
      single && 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <
                    kSerialProductFlops;
  if (serial)
    os << "sinter_on_one_thread([&] { ";
  if (openBlasMultiplies(single, transposeA, m, n, k))
    os << "cblas_sgemm(CblasRowMajor, " << (transposeA ? "CblasTrans" : "CblasNoTrans") << ", "
       << (transposeB ? "CblasTrans" : "CblasNoTrans");
  else
    os << "dnnl_sgemm(" << (transposeA ? "'T'" : "'N'") << ", " << (transposeB ? "'T'" : "'N'");
  os << ", " << m << ", " << n << ", " << k << ", 1.0f, " << a << ", " << lda << ", " << b << ", "
     << ldb << ", " << beta << ", " << c << ", " << ldc << ")";
  if (serial)
    os << "; })";
  return call;
}

class LibraryRenderer {
public:
  LibraryRenderer(llvm::raw_ostream &os) : os(os) {}

  /// Scratch bytes the kernel takes after its results, in output-slot order.
  std::vector<int64_t> scratch;

  LogicalResult render(Operation *op, StringRef name) {
    for (Value v : op->getOperands())
      if (elementType(v).empty())
        return op->emitError() << "the CPU renderer does not support " << v.getType() << " yet";
    os << "\nextern \"C\" void " << name << "(const void *const *inputs, void *const *outputs) {\n";
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      os << "  const " << elementType(v) << " *in" << i << " = static_cast<const " << elementType(v)
         << " *>(inputs[" << i << "]);\n";
    for (auto [i, v] : llvm::enumerate(op->getResults()))
      os << "  " << elementType(v) << " *out" << i << " = static_cast<" << elementType(v)
         << " *>(outputs[" << i << "]);\n";
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case<MatmulOp>([&](MatmulOp m) {
              return m.emitError("a matrix product is a library call of the Program (Note "
                                 "[Matrix products as data]), not a kernel");
            })
            .Case<Conv2dOp, Conv2dBackwardInputOp, Conv2dBackwardFilterOp>(
                [&](Operation *c) { return conv(c); })
            .Case<Pool2dOp, Pool2dBackwardOp>([&](Operation *p) { return pool(p); })
            .Case<GatherOp, ScatterAddOp>([&](Operation *g) { return gather(g); })
            .Case<ConcatOp>([&](ConcatOp c) { return concat(c); })
            .Case<ArgMaxOp>([&](ArgMaxOp a) { return argmax(a); })
            .Default([&](Operation *other) {
              return other->emitError()
                     << "the CPU renderer has no kernel for '" << other->getName() << "'";
            });
    os << "}\n";
    return result;
  }

private:
  static ArrayRef<int64_t> shapeOf(Value v) { return cast<ShapedType>(v.getType()).getShape(); }

  LogicalResult conv(Operation *op) {
    auto attrs = [&](auto c) {
      return std::make_tuple(c.getStride(), c.getPadding(), c.getDilation(),
                             static_cast<int64_t>(c.getGroups()));
    };
    ArrayRef<int64_t> stride, padding, dilation;
    int64_t groups;
    Value input, filter, output;
    if (auto c = dyn_cast<Conv2dOp>(op)) {
      std::tie(stride, padding, dilation, groups) = attrs(c);
      input = c.getInput(), filter = c.getFilter(), output = c.getResult();
    } else if (auto c = dyn_cast<Conv2dBackwardInputOp>(op)) {
      std::tie(stride, padding, dilation, groups) = attrs(c);
      input = c.getResult(), filter = c.getFilter(), output = c.getGradOutput();
    } else {
      auto b = cast<Conv2dBackwardFilterOp>(op);
      std::tie(stride, padding, dilation, groups) = attrs(b);
      input = b.getInput(), filter = b.getResult(), output = b.getGradOutput();
    }
    ArrayRef<int64_t> in = shapeOf(input), w = shapeOf(filter), out = shapeOf(output);
    // Convolution as matrix products (im2col): for a chunk of images and a
    // group, the patches of the input become the columns of a [Cg*KH*KW,
    // images*OH*OW] matrix, and one sgemm multiplies it with the group's
    // filters. Backward input multiplies the transposed filters with the
    // output gradient and adds the columns back into their patches (col2im,
    // channel by channel); backward filter sums over the chunks in order.
    // Deterministic throughout (Note [Images per product]).
    int64_t og = w[0] / groups, cg = w[1], k = w[1] * w[2] * w[3], p = out[2] * out[3];
    int64_t inImage = in[1] * in[2] * in[3], outImage = out[1] * p, plane = in[2] * in[3];
    bool forward = isa<Conv2dOp>(op), backwardInput = isa<Conv2dBackwardInputOp>(op);
    os << "  for (int64_t i = 0; i < " << ShapedType::getNumElements(shapeOf(op->getResult(0)))
       << "; ++i) out0[i] = 0;\n";
    if (k == 0 || p == 0 || og == 0 || in[0] == 0)
      return success();
    int64_t chunk = imagesPerProduct(in[0], p), n = chunk * p;
    scratch.push_back(k * n * 4);
    os << "  float *col = static_cast<float *>(outputs[1]);\n";
    if (chunk > 1) {
      scratch.push_back(og * n * 4);
      os << "  float *aux = static_cast<float *>(outputs[2]);\n";
    }
    // Note [Transposed filter gradients]: with fewer than 128 filters per
    // group (and more rows than filters), the filter gradient is computed
    // transposed, [k x og] = columns · gradientᵀ, into `wt`, and transposed
    // into place after the last chunk. oneDNN splits a product of 64 rows
    // badly over two threads: 'N','T' 64x576x1024 (the first ResNet stage)
    // took 575 us on two threads and 415 on one, 576x64x1024 268 us on two.
    // From 128 rows on both forms run alike (128x576x256 142 / 133 us).
    bool transposedGradient = !forward && !backwardInput && og < kTransposedGradientRows && k > og;
    if (transposedGradient) {
      scratch.push_back(groups * og * k * 4);
      os << "  float *wt = static_cast<float *>(outputs[" << scratch.size() << "]);\n";
    }
    os << "  for (int64_t b0 = 0; b0 < " << in[0] << "; b0 += " << chunk << ")\n"
       << "  for (int64_t g = 0; g < " << groups << "; ++g) {\n";
    // The output (gradient) of the chunk's images as one [og, n] matrix: in
    // place for one image, else gathered into `aux` (or scattered from it).
    std::string convOutput = forward ? "out0" : backwardInput ? "in0" : "in1";
    std::string matrix = chunk == 1 ? convOutput + " + b0 * " + std::to_string(outImage) +
                                          " + g * " + std::to_string(og * p)
                                    : "aux";
    auto copyOutputs = [&](bool gather) {
      std::string element = convOutput + "[(b0 + j) * " + std::to_string(outImage) + " + (g * " +
                            std::to_string(og) + " + o) * " + std::to_string(p) + " + q]";
      std::string packed = "aux[o * " + std::to_string(n) + " + j * " + std::to_string(p) + " + q]";
      os << "    #pragma omp parallel for\n"
         << "    for (int64_t o = 0; o < " << og << "; ++o)\n"
         << "      for (int64_t j = 0; j < " << chunk << "; ++j)\n"
         << "        for (int64_t q = 0; q < " << p << "; ++q)\n"
         << "          " << (gather ? packed + " = " + element : element + " = " + packed) << ";\n";
    };
    // Row r = (c, ky, kx) of the column matrix, column j * p + oy * OW + ox,
    // holds the input pixel (iy, ix) = (oy * sy - py + ky * dy, ox * sx + off)
    // of image b0 + j, or 0 in the padding, where off = kx * dx - px. The
    // columns ox in [lo, hi) are the ones inside the image: the loops over
    // them have no test, and vectorise.
    int64_t sy = stride[0], sx = stride[1];
    auto columns = [&](const std::string &indent) {
      os << indent << "const int64_t off = kx * " << dilation[1] << " - " << padding[1] << ";\n"
         << indent << "int64_t lo = off >= 0 ? 0 : (" << sx - 1 << " - off) / " << sx << ";\n"
         << indent << "if (lo > " << out[3] << ") lo = " << out[3] << ";\n"
         << indent << "int64_t hi = " << in[3] << " - off <= 0 ? 0 : (" << in[3] + sx - 1
         << " - off) / " << sx << ";\n"
         << indent << "if (hi > " << out[3] << ") hi = " << out[3] << ";\n"
         << indent << "if (hi < lo) hi = lo;\n";
    };
    auto inputRow = [&](const std::string &indent) {
      os << indent << "const int64_t iy = oy * " << sy << " - " << padding[0] << " + ky * "
         << dilation[0] << ";\n";
    };
    if (!backwardInput) {
      os << "    #pragma omp parallel for\n"
         << "    for (int64_t r = 0; r < " << k << "; ++r) {\n"
         << "      const int64_t kx = r % " << w[3] << ", ky = r / " << w[3] << " % " << w[2]
         << ", c = r / " << w[2] * w[3] << ";\n";
      columns("      ");
      os << "      for (int64_t j = 0; j < " << chunk << "; ++j) {\n"
         << "        const float *image = in0 + (b0 + j) * " << inImage << " + (g * " << cg
         << " + c) * " << plane << ";\n"
         << "        float *row = col + r * " << n << " + j * " << p << ";\n"
         << "        for (int64_t oy = 0; oy < " << out[2] << "; ++oy) {\n";
      inputRow("          ");
      os << "          float *to = row + oy * " << out[3] << ";\n"
         << "          if (iy < 0 || iy >= " << in[2] << ") {\n"
         << "            for (int64_t ox = 0; ox < " << out[3] << "; ++ox) to[ox] = 0.0f;\n"
         << "            continue;\n"
         << "          }\n"
         << "          const float *from = image + iy * " << in[3] << ";\n"
         << "          for (int64_t ox = 0; ox < lo; ++ox) to[ox] = 0.0f;\n"
         << "          for (int64_t ox = lo; ox < hi; ++ox) to[ox] = from[ox * " << sx
         << " + off];\n"
         << "          for (int64_t ox = hi; ox < " << out[3] << "; ++ox) to[ox] = 0.0f;\n"
         << "        }\n"
         << "      }\n"
         << "    }\n";
    }
    std::string filters = "in1 + g * " + std::to_string(og * k);
    if (forward) {
      os << "    " << sgemm(true, false, false, og, n, k, filters, k, "col", n, "0.0f", matrix, n)
         << ";\n";
      if (chunk > 1)
        copyOutputs(/*gather=*/false);
    } else if (backwardInput) {
      // in0: the output gradient, in1: the filters; out0: the input gradient.
      if (chunk > 1)
        copyOutputs(/*gather=*/true);
      os << "    " << sgemm(true, true, false, k, n, og, filters, k, matrix, n, "0.0f", "col", n)
         << ";\n"
         << "    #pragma omp parallel for\n"
         << "    for (int64_t c = 0; c < " << cg << "; ++c)\n"
         << "      for (int64_t j = 0; j < " << chunk << "; ++j) {\n"
         << "        float *image = out0 + (b0 + j) * " << inImage << " + (g * " << cg << " + c) * "
         << plane << ";\n"
         << "        for (int64_t ky = 0; ky < " << w[2] << "; ++ky)\n"
         << "        for (int64_t kx = 0; kx < " << w[3] << "; ++kx) {\n";
      columns("          ");
      os << "          const float *row = col + ((c * " << w[2] << " + ky) * " << w[3]
         << " + kx) * " << n << " + j * " << p << ";\n"
         << "          for (int64_t oy = 0; oy < " << out[2] << "; ++oy) {\n";
      inputRow("            ");
      os << "            if (iy < 0 || iy >= " << in[2] << ") continue;\n"
         << "            float *to = image + iy * " << in[3] << ";\n"
         << "            const float *from = row + oy * " << out[3] << ";\n"
         << "            for (int64_t ox = lo; ox < hi; ++ox) to[ox * " << sx
         << " + off] += from[ox];\n"
         << "          }\n"
         << "        }\n"
         << "      }\n";
    } else {
      // in0: the input, in1: the output gradient; out0: the filter gradient.
      if (chunk > 1)
        copyOutputs(/*gather=*/true);
      // [og x k] = gradient · columnsᵀ into out0, or its transpose into wt.
      int64_t rows = transposedGradient ? k : og, width = transposedGradient ? og : k;
      std::string lhs = transposedGradient ? "col" : matrix;
      std::string rhs = transposedGradient ? matrix : "col";
      std::string into = transposedGradient ? "wt" : "out0";
      os << "    "
         << sgemm(true, false, true, rows, width, n, lhs, n, rhs, n, "b0 == 0 ? 0.0f : 1.0f",
                  into + " + g * " + std::to_string(og * k), width)
         << ";\n";
    }
    os << "  }\n";
    if (transposedGradient)
      os << "  #pragma omp parallel for if (" << groups * og * k << " >= 32768)\n"
         << "  for (int64_t go = 0; go < " << groups * og << "; ++go)\n"
         << "    for (int64_t r = 0; r < " << k << "; ++r)\n"
         << "      out0[go * " << k << " + r] = wt[(go / " << og << " * " << k << " + r) * " << og
         << " + go % " << og << "];\n";
    return success();
  }

  LogicalResult pool(Operation *op) {
    bool backward = isa<Pool2dBackwardOp>(op);
    PoolKind kind = backward ? cast<Pool2dBackwardOp>(op).getKind() : cast<Pool2dOp>(op).getKind();
    ArrayRef<int64_t> kernel =
        backward ? cast<Pool2dBackwardOp>(op).getKernel() : cast<Pool2dOp>(op).getKernel();
    ArrayRef<int64_t> stride =
        backward ? cast<Pool2dBackwardOp>(op).getStride() : cast<Pool2dOp>(op).getStride();
    ArrayRef<int64_t> padding =
        backward ? cast<Pool2dBackwardOp>(op).getPadding() : cast<Pool2dOp>(op).getPadding();
    ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
    ArrayRef<int64_t> out = backward ? shapeOf(op->getOperand(1)) : shapeOf(op->getResult(0));
    int64_t window = kernel[0] * kernel[1];
    os << "  for (int64_t i = 0; i < " << ShapedType::getNumElements(shapeOf(op->getResult(0)))
       << "; ++i) out0[i] = 0;\n"
       << "  for (int64_t p = 0; p < " << in[0] * in[1] << "; ++p)\n"
       << "  for (int64_t y = 0; y < " << out[2] << "; ++y)\n"
       << "  for (int64_t xx = 0; xx < " << out[3] << "; ++xx) {\n"
       << "    int64_t o = (p * " << out[2] << " + y) * " << out[3] << " + xx, best = -1;\n"
       << "    for (int64_t ky = 0; ky < " << kernel[0] << "; ++ky)\n"
       << "    for (int64_t kx = 0; kx < " << kernel[1] << "; ++kx) {\n"
       << "      int64_t iy = y * " << stride[0] << " - " << padding[0] << " + ky;\n"
       << "      int64_t ix = xx * " << stride[1] << " - " << padding[1] << " + kx;\n"
       << "      if (iy < 0 || iy >= " << in[2] << " || ix < 0 || ix >= " << in[3]
       << ") continue;\n"
       << "      int64_t x = (p * " << in[2] << " + iy) * " << in[3] << " + ix;\n";
    if (kind == PoolKind::avg)
      os << "      " << (backward ? "out0[x] += in1[o] / " : "out0[o] += in0[x] / ") << window
         << ".0f;\n    }\n";
    else
      os << "      if (best < 0 || in0[x] > in0[best] || (in0[x] != in0[x] && in0[best] == "
            "in0[best])) "
            "best = x;\n    }\n"
         << "    if (best >= 0) " << (backward ? "out0[best] += in1[o];" : "out0[o] = in0[best];")
         << "\n";
    os << "  }\n";
    return success();
  }

  LogicalResult gather(Operation *op) {
    bool scatter = isa<ScatterAddOp>(op);
    int64_t axis = scatter ? static_cast<int64_t>(cast<ScatterAddOp>(op).getAxis())
                           : static_cast<int64_t>(cast<GatherOp>(op).getAxis());
    ArrayRef<int64_t> table = shapeOf(op->getOperand(0)), indices = shapeOf(op->getOperand(1));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= table[d];
    for (size_t d = axis + 1; d < table.size(); ++d)
      inner *= table[d];
    int64_t count = ShapedType::getNumElements(indices), extent = table[axis];
    // Indices out of range read zeros and add nothing (the reference executor
    // reports them; checked builds will too).
    if (scatter)
      os << "  for (int64_t i = 0; i < " << ShapedType::getNumElements(table)
         << "; ++i) out0[i] = in0[i];\n";
    os << "  for (int64_t a = 0; a < " << outer << "; ++a)\n"
       << "  for (int64_t q = 0; q < " << count << "; ++q) {\n"
       << "    int64_t index = static_cast<int64_t>(in1[q]);\n"
       << "    bool valid = index >= 0 && index < " << extent << ";\n"
       << "    for (int64_t c = 0; c < " << inner << "; ++c) {\n"
       << "      int64_t t = (a * " << extent << " + index) * " << inner << " + c;\n"
       << "      int64_t g = (a * " << count << " + q) * " << inner << " + c;\n";
    if (scatter)
      os << "      if (valid) out0[t] += in2[g];\n";
    else
      os << "      out0[g] = valid ? in0[t] : 0;\n";
    os << "    }\n  }\n";
    return success();
  }

  LogicalResult concat(ConcatOp op) {
    int64_t axis = static_cast<int64_t>(op.getDim());
    ArrayRef<int64_t> out = shapeOf(op.getResult());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= out[d];
    for (size_t d = axis + 1; d < out.size(); ++d)
      inner *= out[d];
    int64_t offset = 0;
    for (auto [i, input] : llvm::enumerate(op.getInputs())) {
      int64_t extent = shapeOf(input)[axis];
      os << "  for (int64_t a = 0; a < " << outer << "; ++a)\n"
         << "    for (int64_t e = 0; e < " << extent * inner << "; ++e)\n"
         << "      out0[(a * " << out[axis] << " + " << offset << ") * " << inner << " + e] = in"
         << i << "[a * " << extent * inner << " + e];\n";
      offset += extent;
    }
    return success();
  }

  LogicalResult argmax(ArgMaxOp op) {
    ArrayRef<int64_t> in = shapeOf(op.getOperand());
    int64_t axis = static_cast<int64_t>(op.getDim()), outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= in[d];
    for (size_t d = axis + 1; d < in.size(); ++d)
      inner *= in[d];
    os << "  for (int64_t a = 0; a < " << outer << "; ++a)\n"
       << "  for (int64_t c = 0; c < " << inner << "; ++c) {\n"
       << "    int64_t best = 0;\n"
       << "    for (int64_t e = 1; e < " << in[axis] << "; ++e) {\n"
       << "      auto x = in0[(a * " << in[axis] << " + e) * " << inner << " + c];\n"
       << "      auto m = in0[(a * " << in[axis] << " + best) * " << inner << " + c];\n"
       << "      if (x > m || (x != x && m == m)) best = e;\n    }\n"
       << "    out0[a * " << inner << " + c] = best;\n  }\n";
    return success();
  }

  llvm::raw_ostream &os;
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
    for (const char *variable : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})
      if (const char *cap = std::getenv(variable); cap != nullptr && *cap != '\0')
        return oneDnnCapKeepsAvx512(cap);
    return true;
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
  step.host.oneThread = single && 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                                          static_cast<double>(k) <
                                      kSerialProductFlops;
  step.operands = {1, 0}; // A is the right operand (Note [Matrix products as data])
  return step;
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
