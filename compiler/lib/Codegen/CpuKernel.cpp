//===- CpuKernel.cpp - the kernels of a module, rendered --------------------===//
//
// Walks a module's kernels in program order: each sinter.fusion planned
// (KernelPlan.cpp) and rendered from its plan
// (compiler/lib/Renderers/CpuRenderer.cpp), each library op rendered by
// CpuLibrary.cpp, and a renderer's problem reported at the op it is about.
//
//===----------------------------------------------------------------------===//
#include "sinter/Codegen/CpuKernel.h"

#include "sinter/Codegen/CpuRenderer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace sinter::ir;

namespace sinter::codegen {
namespace {

/// `problem`, which the renderer met in `fusion`'s plan, as a diagnostic at
/// the op (or the fusion's operand) it is about.
LogicalResult report(FusionOp fusion, const RenderProblem &problem) {
  using Kind = RenderProblem::Kind;
  if (problem.kind == Kind::ScratchMismatch)
    return fusion.emitError("internal error: the kernel's scratch buffers differ from its plan's");
  if (problem.kind == Kind::ForeignChoices)
    return fusion.emitError() << "internal error: the CPU renderer was given " << problem.detail;
  if (problem.value < 0)
    return fusion.emitError() << "the CPU renderer does not support "
                              << fusion->getOperand(-1 - problem.value).getType() << " yet";
  Block &body = fusion.getBody().front();
  Operation &op = *std::next(body.begin(), problem.value);
  if (!problem.detail.empty())
    return op.emitError() << "the CPU renderer does not write " << problem.detail;
  switch (problem.kind) {
  case Kind::UnsupportedType:
    return op.emitError() << "the CPU renderer does not support " << op.getResult(0).getType()
                          << " yet";
  case Kind::SeveralResults:
    return op.emitError() << "the CPU renderer expects one result";
  default:
    return op.emitError() << "the CPU renderer does not support '" << op.getName() << "'";
  }
}

} // namespace

std::string cppElementType(Type type) {
  Type element = cast<ShapedType>(type).getElementType();
  if (element.isF32())
    return "float";
  if (element.isInteger(1))
    return "bool";
  if (element.isInteger(32))
    return "int32_t";
  if (element.isInteger(64))
    return "int64_t";
  return "";
}

FailureOr<std::string> renderCpuKernels(Operation *root, StringRef prefix, int64_t &count,
                                        std::vector<std::vector<int64_t>> *scratch,
                                        std::vector<std::optional<KernelPlan>> *plans) {
  std::string source;
  llvm::raw_string_ostream os(source);
  os << cpuKernelPrologue();
  count = 0;
  WalkResult walk = root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    std::string name = (prefix + llvm::Twine(count)).str();
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      ++count;
      KernelPlan plan = planCpuKernel(fusion);
      std::string kernel;
      if (std::optional<RenderProblem> problem = renderCpuKernel(plan, name, kernel)) {
        (void)report(fusion, *problem);
        return WalkResult::interrupt();
      }
      os << kernel;
      if (scratch)
        scratch->push_back(plan.scratchBytes);
      if (plans)
        plans->push_back(std::move(plan));
      return WalkResult::skip(); // its body is the kernel
    }
    if (isLibraryKernel(op) && !op->getParentOfType<FusionOp>()) {
      ++count;
      if (plans)
        plans->emplace_back();
      if (cpuLibraryStep(op)) { // a library call of the Program, no kernel
        if (scratch)
          scratch->emplace_back();
        return WalkResult::advance();
      }
      std::vector<int64_t> own;
      if (failed(renderCpuLibraryKernel(op, name, os, &own)))
        return WalkResult::interrupt();
      if (scratch)
        scratch->push_back(std::move(own));
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return os.str();
}

} // namespace sinter::codegen
