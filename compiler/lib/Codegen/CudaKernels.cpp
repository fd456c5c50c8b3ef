//===- CudaKernels.cpp - every fusion of a module as CUDA C++ -------------===//
#include "sinter/Codegen/CudaKernels.h"

#include "sinter/Codegen/CpuKernel.h"
#include "sinter/Codegen/CudaRenderer.h"
#include "sinter/Dialect/Sinter/SinterOps.h"

#include "llvm/ADT/Twine.h"

namespace sinter::codegen {

namespace {

std::string problemText(const RenderProblem &problem) {
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
  }
  return "";
}

} // namespace

CudaKernels renderCudaKernels(mlir::Operation *root, llvm::StringRef prefix) {
  CudaKernels kernels;
  kernels.source = cudaKernelPrologue();
  root->walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation *op) {
    std::string name = (prefix + llvm::Twine(kernels.count)).str();
    if (auto fusion = mlir::dyn_cast<ir::FusionOp>(op)) {
      ++kernels.count;
      runtime::LaunchShape shape;
      std::string source;
      std::optional<RenderProblem> problem =
          renderCudaKernel(planCpuKernel(fusion), name, source, shape);
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
      kernels.written.push_back(false);
      kernels.library.push_back(true);
      kernels.shapes.emplace_back();
      kernels.why.push_back("a library op");
      kernels.source += "\n// " + name + ": a library op (" + op->getName().getStringRef().str() +
                        "), not a generated kernel\n";
    }
    return mlir::WalkResult::advance();
  });
  return kernels;
}

} // namespace sinter::codegen
