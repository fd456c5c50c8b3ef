//===- CudaKernels.cpp - every kernel of a module as CUDA C++ -------------===//
#include "sinter/Codegen/CudaKernels.h"

#include "sinter/Codegen/CpuKernel.h"
#include "sinter/Codegen/CudaRenderer.h"
#include "sinter/Codegen/Target.h"
#include "sinter/Dialect/Sinter/SinterOps.h"

#include "LibraryOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

namespace sinter::codegen {

namespace {

std::string reason(const RenderProblem &problem) {
  if (!problem.detail.empty())
    return problem.detail;
  switch (problem.kind) {
  case RenderProblem::Kind::UnsupportedType:
    return "an element type it has no type for";
  case RenderProblem::Kind::SeveralResults:
    return "an op of several results";
  case RenderProblem::Kind::UnsupportedOp:
    return "an op it does not write";
  case RenderProblem::Kind::ScratchMismatch:
    return "scratch buffers that differ from the plan's";
  case RenderProblem::Kind::ForeignChoices:
    return "a plan made with another target's choices";
  }
  return "";
}

/// What the renderer could not write, with the value of the plan it names
/// (`sinter-translate --sinter-to-kernel-plans` prints the plan).
std::string problemText(const RenderProblem &problem) {
  std::string text = reason(problem);
  if (problem.value >= 0)
    text += " (%" + std::to_string(problem.value) + " of its plan)";
  return text;
}

using namespace mlir;
using namespace sinter::ir;

ArrayRef<int64_t> shapeOf(Value v) { return cast<ShapedType>(v.getType()).getShape(); }

/// The calls of kernels/cuda/library.h that compute a library op (Note
/// [Library ops on the GPU]) and the threads they take (the most of any
/// call; `warps`: whole warps that shuffle), or "" for an op it has no
/// kernel for.
std::string libraryCall(Operation *op, int64_t &work, bool &warps) {
  warps = false;
  auto list = [](std::initializer_list<int64_t> values) {
    std::string text;
    for (int64_t v : values)
      text += (text.empty() ? "" : ", ") + std::to_string(v);
    return text;
  };
  auto type = [](Value v) { return cppElementType(v.getType()); };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<GatherOp, ScatterAddOp>([&](Operation *g) {
        bool scatter = isa<ScatterAddOp>(g);
        int64_t axis = scatter ? static_cast<int64_t>(cast<ScatterAddOp>(g).getAxis())
                               : static_cast<int64_t>(cast<GatherOp>(g).getAxis());
        auto [outer, extent, inner] = aroundAxis(shapeOf(g->getOperand(0)), axis);
        int64_t count = ShapedType::getNumElements(shapeOf(g->getOperand(1)));
        work = scatter ? outer * inner : outer * count * inner;
        return std::string(scatter ? "sinter::cuda::scatterAdd<" : "sinter::cuda::gather<") +
               type(g->getOperand(0)) + ", " + type(g->getOperand(1)) + ">(" +
               list({outer, count, extent, inner}) + ", in0, in1, " + (scatter ? "in2, " : "") +
               "out0);";
      })
      .Case<ConcatOp>([&](ConcatOp c) {
        int64_t axis = static_cast<int64_t>(c.getDim());
        auto [outer, outExtent, inner] = aroundAxis(shapeOf(c.getResult()), axis);
        std::string text;
        int64_t offset = 0;
        work = 0;
        for (auto [i, input] : llvm::enumerate(c.getInputs())) {
          int64_t extent = shapeOf(input)[axis];
          text += std::string(text.empty() ? "" : "\n  ") + "sinter::cuda::concatPart<" +
                  type(input) + ">(" + list({outer, extent, inner, outExtent, offset}) + ", in" +
                  std::to_string(i) + ", out0);";
          work = std::max(work, outer * extent * inner);
          offset += extent;
        }
        // The parts are one kernel, each a grid-stride loop of its own.
        return text;
      })
      .Case<ArgMaxOp>([&](ArgMaxOp a) {
        auto [outer, extent, inner] =
            aroundAxis(shapeOf(a.getOperand()), static_cast<int64_t>(a.getDim()));
        work = outer * inner;
        return "sinter::cuda::argmax<" + type(a.getOperand()) + ", " + type(a.getResult()) + ">(" +
               list({outer, extent, inner}) + ", in0, out0);";
      })
      .Case<Pool2dOp, Pool2dBackwardOp>([&](Operation *) {
        PoolOperands p = poolOperands(op);
        ArrayRef<int64_t> in = shapeOf(p.input), out = shapeOf(p.output);
        work = p.backward ? in[0] * in[1] * in[2] * in[3] : out[0] * out[1] * out[2] * out[3];
        std::string shape =
            "sinter::cuda::Pool2d{" +
            list({in[0] * in[1], in[2], in[3], out[2], out[3], p.kernel[0], p.kernel[1],
                  p.stride[0], p.stride[1], p.padding[0], p.padding[1]}) +
            (p.kind == PoolKind::max ? ", true}" : ", false}");
        return p.backward ? "sinter::cuda::pool2dBackward(" + shape + ", in0, in1, out0);"
                          : "sinter::cuda::pool2d(" + shape + ", in0, out0);";
      })
      .Case<Conv2dOp, Conv2dBackwardInputOp, Conv2dBackwardFilterOp>([&](Operation *) {
        ConvolutionOperands c = convolutionOperands(op);
        ArrayRef<int64_t> in = shapeOf(c.input), w = shapeOf(c.filter), out = shapeOf(c.output);
        std::string shape = "sinter::cuda::Conv2d{" +
                            list({in[0], in[1], in[2], in[3], w[0], w[2], w[3], out[2], out[3],
                                  c.stride[0], c.stride[1], c.padding[0], c.padding[1],
                                  c.dilation[0], c.dilation[1], c.groups}) +
                            "}";
        if (isa<Conv2dOp>(op)) {
          work = out[0] * out[1] * out[2] * out[3];
          return "sinter::cuda::conv2d(" + shape + ", in0, in1, out0);";
        }
        if (isa<Conv2dBackwardInputOp>(op)) {
          work = in[0] * in[1] * in[2] * in[3];
          return "sinter::cuda::conv2dBackwardInput(" + shape + ", in0, in1, out0);";
        }
        work = w[0] * w[1] * w[2] * w[3];
        // Terms of a weight's gradient (images x output pixels) that make a
        // warp per weight worth it (8 a lane), where there are fewer weights
        // than a GPU's worth of threads (Note [Library ops on the GPU]).
        constexpr int64_t kWarpTerms = 256;
        if (work < kCudaFillBlocks * kCudaThreads && in[0] * out[2] * out[3] >= kWarpTerms) {
          work *= 32;
          warps = true;
          return "sinter::cuda::conv2dBackwardFilterWarps(" + shape + ", in0, in1, out0);";
        }
        return "sinter::cuda::conv2dBackwardFilter(" + shape + ", in0, in1, out0);";
      })
      .Default([](Operation *) { return std::string(); });
}

/// A library op's kernel (Note [Library ops on the GPU] in
/// kernels/cuda/library.h), or why there is none.
std::string renderLibraryKernel(Operation *op, const std::string &name, std::string &source,
                                runtime::LaunchShape &shape) {
  // Buffers in the kernel's parameter order: the operands, then the results.
  std::vector<std::string> parameters, casts;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    std::string t = cppElementType(v.getType());
    if (t.empty() || t == "bool")
      return "an operand of a type its library kernel does not take";
    parameters.push_back("const " + t + " *__restrict__ in" + std::to_string(i));
    casts.push_back("static_cast<const " + t + " *>(buffers[" + std::to_string(casts.size()) +
                    "])");
  }
  for (auto [k, v] : llvm::enumerate(op->getResults())) {
    std::string t = cppElementType(v.getType());
    if (t.empty() || t == "bool")
      return "a result of a type its library kernel does not write";
    parameters.push_back(t + " *__restrict__ out" + std::to_string(k));
    casts.push_back("static_cast<" + t + " *>(buffers[" + std::to_string(casts.size()) + "])");
  }
  int64_t work = 0;
  bool warps = false;
  std::string call = libraryCall(op, work, warps);
  if (call.empty())
    return "no library kernel for " + op->getName().getStringRef().str();
  shape = cudaLaunchShape((work + kCudaThreads - 1) / kCudaThreads);
  source += cudaKernelText(name, parameters, casts, "  " + call + "\n", warps);
  return "";
}

} // namespace

KernelPlan::Choices cudaPlanChoices() {
  return {.lanes = 0, .minRows = 0, .columnBlock = 0, .rowStackBytes = 0, .storesValues = false};
}

KernelPlan planCudaKernel(ir::FusionOp fusion) {
  KernelPlan plan = planFusion(fusion, cudaPlanChoices());
  keepCudaInPlacePairs(plan);
  // Its scratch buffers are split reductions' partials (Note [Split column
  // reductions]), the renderer's own.
  plan.scratchBytes = cudaScratchBytes(plan);
  return plan;
}

CudaKernels renderCudaKernels(mlir::Operation *root, llvm::StringRef prefix) {
  CudaKernels kernels;
  kernels.source = cudaKernelPrologue();
  root->walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation *op) {
    std::string name = (prefix + llvm::Twine(kernels.count)).str();
    if (auto fusion = mlir::dyn_cast<ir::FusionOp>(op)) {
      ++kernels.count;
      runtime::LaunchShape shape;
      std::string source;
      KernelPlan plan = planCudaKernel(fusion);
      std::optional<RenderProblem> problem = renderCudaKernel(plan, name, source, shape);
      kernels.plans.push_back(std::move(plan));
      kernels.ops.push_back(op);
      kernels.written.push_back(!problem);
      kernels.library.push_back(false);
      kernels.shapes.push_back(shape);
      kernels.why.push_back(problem ? problemText(*problem) : "");
      kernels.source +=
          problem ? "\n// " + name + ": not written: " + kernels.why.back() + "\n" : "\n" + source;
      return mlir::WalkResult::skip();
    }
    if (isLibraryKernel(op) && !op->getParentOfType<ir::FusionOp>()) {
      ++kernels.count;
      kernels.library.push_back(true);
      runtime::LaunchShape shape;
      std::string source;
      // A matrix product is a library call of the Program (Note [Matrix
      // products as data]), not a kernel.
      std::string why = mlir::isa<ir::MatmulOp>(op) ? "a matrix product (a library call)"
                                                    : renderLibraryKernel(op, name, source, shape);
      kernels.written.push_back(why.empty());
      kernels.plans.emplace_back();
      kernels.ops.push_back(op);
      kernels.shapes.push_back(shape);
      kernels.why.push_back(why);
      kernels.source += why.empty() ? "\n" + source
                                    : "\n// " + name + ": a library op (" +
                                          op->getName().getStringRef().str() + "): " + why + "\n";
      return mlir::WalkResult::advance();
    }
    return mlir::WalkResult::advance();
  });
  return kernels;
}

} // namespace sinter::codegen
