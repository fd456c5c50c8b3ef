//===- Dataflow.cpp - a function's kernels over values --------------------===//
#include "Dataflow.h"

namespace sinter::passes {

int64_t bytesOf(mlir::Value value) {
  auto type = mlir::cast<mlir::ShapedType>(value.getType());
  mlir::Type element = type.getElementType();
  int64_t width = element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  return type.getNumElements() * width;
}

FunctionFlow dataflowOf(mlir::func::FuncOp function) {
  FunctionFlow result;
  planner::Dataflow &flow = result.flow;
  auto add = [&](mlir::Value value, bool argument) {
    int id = static_cast<int>(flow.bytes.size());
    flow.bytes.push_back(value.use_empty() ? 0 : bytesOf(value));
    flow.argument.push_back(argument);
    flow.returned.push_back(false);
    flow.donated.push_back(false);
    result.valueOf[value] = id;
    return id;
  };
  for (mlir::BlockArgument arg : function.getArguments())
    add(arg, /*argument=*/true);
  for (mlir::Operation &op : function.getBody().front()) {
    if (isView(&op)) {
      result.valueOf[op.getResult(0)] = result.valueOf.lookup(op.getOperand(0));
      continue;
    }
    if (mlir::isa<mlir::func::ReturnOp>(op)) {
      for (mlir::Value v : op.getOperands())
        flow.returned[result.valueOf.lookup(v)] = true;
      continue;
    }
    if (mlir::isa<ir::ConstantOp>(op)) {
      add(op.getResult(0), /*argument=*/false);
      continue;
    }
    planner::Dataflow::Kernel kernel;
    for (mlir::Value v : op.getOperands())
      kernel.reads.push_back(result.valueOf.lookup(v));
    for (mlir::Value v : op.getResults())
      kernel.writes.push_back(add(v, /*argument=*/false));
    flow.kernels.push_back(std::move(kernel));
    result.kernels.push_back(&op);
  }
  // An update may be written into the memory of the argument it replaces
  // (Note [Donation]): a kernel that reads an argument and writes a result
  // of its size runs after every other reader of that argument.
  std::vector<std::vector<int>> readersOf(flow.bytes.size());
  for (size_t k = 0; k < flow.kernels.size(); ++k)
    for (int v : flow.kernels[k].reads)
      if (flow.argument[v] && (readersOf[v].empty() || readersOf[v].back() != static_cast<int>(k)))
        readersOf[v].push_back(static_cast<int>(k));
  // Each argument takes at most one result (donateArguments() in BufferAssignment.cpp pairs
  // them one to one); the others are counted in the arena.
  std::vector<bool> taken(flow.bytes.size(), false);
  for (size_t k = 0; k < flow.kernels.size(); ++k) {
    planner::Dataflow::Kernel &kernel = flow.kernels[k];
    for (int a : kernel.reads) {
      if (!flow.argument[a])
        continue;
      bool updates = false;
      for (int w : kernel.writes)
        if (flow.returned[w] && flow.bytes[w] == flow.bytes[a]) {
          updates = true;
          if (!taken[a] && !flow.donated[w])
            flow.donated[w] = taken[a] = true;
        }
      if (updates)
        for (int reader : readersOf[a])
          if (reader != static_cast<int>(k))
            kernel.after.push_back(reader);
    }
  }
  return result;
}

} // namespace sinter::passes
