//===- StepCompiler.cpp - mark_step's compiler for the CPU -----------------===//
//
// The executable cache: structure hash -> loaded CpuExecutable. Arguments
// are the step's data nodes; their values are immutable, so a node whose
// value is the one of the last run (the dataset, unchanged weights) is not
// converted or copied again. The last run's values are held, not just their
// addresses: a freed value's address could come back for a new value.
//
//===----------------------------------------------------------------------===//
#include "sinter/Compiler/StepCompiler.h"

#include "sinter/Compiler.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/lazy/Graph.h"

#include <cstring>
#include <map>
#include <mutex>

namespace sinter::compiler {
namespace {

bool supported(DType dtype) {
  return dtype == DType::f32 || dtype == DType::i32 || dtype == DType::i64 ||
         dtype == DType::boolean;
}

std::vector<uint8_t> toBytes(const lazy::Node &node) {
  int64_t n = numel(node.shape);
  size_t size = elementSize(node.dtype);
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * size);
  const std::vector<double> &v = node.value->elements;
  for (int64_t k = 0; k < n; ++k) {
    uint8_t *at = bytes.data() + k * size;
    switch (node.dtype) {
    case DType::f32: {
      float x = static_cast<float>(v[k]);
      std::memcpy(at, &x, 4);
      break;
    }
    case DType::i32: {
      int32_t x = static_cast<int32_t>(v[k]);
      std::memcpy(at, &x, 4);
      break;
    }
    case DType::i64: {
      int64_t x = static_cast<int64_t>(v[k]);
      std::memcpy(at, &x, 8);
      break;
    }
    default:
      *at = v[k] != 0;
      break;
    }
  }
  return bytes;
}

std::shared_ptr<const lazy::Value> fromBytes(const std::vector<uint8_t> &bytes, DType dtype) {
  auto value = std::make_shared<lazy::Value>();
  size_t size = elementSize(dtype), n = bytes.size() / size;
  value->elements.resize(n);
  for (size_t k = 0; k < n; ++k) {
    const uint8_t *at = bytes.data() + k * size;
    switch (dtype) {
    case DType::f32: {
      float x;
      std::memcpy(&x, at, 4);
      value->elements[k] = x;
      break;
    }
    case DType::i32: {
      int32_t x;
      std::memcpy(&x, at, 4);
      value->elements[k] = x;
      break;
    }
    case DType::i64: {
      int64_t x;
      std::memcpy(&x, at, 8);
      value->elements[k] = static_cast<double>(x);
      break;
    }
    default:
      value->elements[k] = *at != 0;
      break;
    }
  }
  return value;
}

struct Entry {
  std::unique_ptr<runtime::CpuExecutable> executable;
  // The argument values of the last run (held, so that their addresses are
  // not reused by new values while compared), and their bytes.
  std::vector<std::shared_ptr<const lazy::Value>> lastValues;
  std::vector<std::vector<uint8_t>> lastBytes;
};

class CpuStepCompiler : public detail::StepCompiler {
public:
  bool run(const std::vector<lazy::NodePtr> &outputs, uint64_t structure,
           std::vector<std::shared_ptr<const lazy::Value>> &values, std::string &why) override {
    std::vector<const lazy::Node *> order = lazy::topological_order(outputs);
    std::vector<const lazy::Node *> arguments;
    for (const lazy::Node *node : order) {
      if (!supported(node->dtype)) {
        why = std::string("the CPU compiler does not support ") + std::string(name(node->dtype)) +
              " yet";
        return false;
      }
      if (!node->device.isCpu()) {
        why = "only CPU tensors are compiled yet";
        return false;
      }
      if (node->op == lazy::Op::Data)
        arguments.push_back(node);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = cache_.find(structure);
    if (found == cache_.end()) {
      CpuStep step;
      std::string error;
      if (!compileStepForCpu(outputs, step, error)) {
        why = "compilation failed: " + error.substr(0, error.find('\n'));
        return false;
      }
      auto executable = runtime::CpuExecutable::load(step.program);
      if (!executable.ok()) {
        why = std::string(executable.status().message());
        return false;
      }
      Entry entry;
      entry.executable = std::move(*executable);
      found = cache_.emplace(structure, std::move(entry)).first;
    }
    Entry &entry = found->second;
    entry.lastValues.resize(arguments.size());
    entry.lastBytes.resize(arguments.size());
    std::vector<const void *> pointers;
    std::vector<int64_t> sizes;
    std::vector<bool> unchanged(arguments.size(), false);
    for (size_t i = 0; i < arguments.size(); ++i) {
      const std::shared_ptr<const lazy::Value> &value = arguments[i]->value;
      // A value is immutable and held here since the last run, so the same
      // pointer means the same bytes.
      if (entry.lastValues[i] == value) {
        unchanged[i] = true;
      } else {
        entry.lastBytes[i] = toBytes(*arguments[i]);
        entry.lastValues[i] = value;
      }
      pointers.push_back(entry.lastBytes[i].data());
      sizes.push_back(static_cast<int64_t>(entry.lastBytes[i].size()));
    }
    std::vector<std::vector<uint8_t>> results;
    absl::Status status = entry.executable->run(pointers, sizes, results, &unchanged);
    if (!status.ok()) {
      why = std::string(status.message());
      return false;
    }
    values.clear();
    for (size_t i = 0; i < outputs.size(); ++i)
      values.push_back(fromBytes(results[i], outputs[i]->dtype));
    return true;
  }

private:
  std::mutex mutex_;
  std::map<uint64_t, Entry> cache_;
};

} // namespace

void install() { detail::register_step_compiler(std::make_shared<CpuStepCompiler>()); }

} // namespace sinter::compiler
