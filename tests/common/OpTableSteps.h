//===- OpTableSteps.h - every row of the op table, on every dtype it takes -===//
//
// opTableStep() records each elementwise op of the op table (Note [The op
// table] in sinter/lazy/Ops.def) through the public API, on every dtype its
// row takes (f32, f16, bf16, i32, i64, bool), on operands that reach the
// ops' edges: signed zeros, a NaN in either operand, division by zero and by -1, negative
// numbers under log, sqrt and pow, exp past f16's range, the bits of
// negative integers. expectOpTableStep compares a run of it with the
// reference executor's: integers and bools exactly, floats within a few
// units in the last place of their dtype (the targets' f32 math functions
// against the reference's double ones, each rounded to the dtype).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TESTS_COMMON_OPTABLESTEPS_H
#define SINTER_TESTS_COMMON_OPTABLESTEPS_H

#include "sinter/Reference.h"
#include "sinter/sinter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace sinter::test_support {

/// A row of the op table: its op, name, operand count and dtype rule.
struct TableRow {
  lazy::Op op;
  std::string name;
  int arity;
  lazy::Operands operands;
};

inline std::vector<TableRow> tableRows() {
  return {
#define SINTER_UNARY_OP(Name, mnemonic, operands, ...)                                             \
  {lazy::Op::Name, mnemonic, 1, lazy::Operands::operands},
#define SINTER_BINARY_OP(Name, mnemonic, operands, ...)                                            \
  {lazy::Op::Name, mnemonic, 2, lazy::Operands::operands},
#include "sinter/lazy/Ops.def"
  };
}

/// `op` on `x` as a user writes it; an undefined tensor for a row this list
/// does not know yet (the test then fails, naming the row).
inline Tensor throughTheApi(lazy::Op op, const std::vector<Tensor> &x) {
  using lazy::Op;
  switch (op) {
  case Op::Neg:
    return -x[0];
  case Op::Abs:
    return abs(x[0]);
  case Op::Exp:
    return exp(x[0]);
  case Op::Log:
    return log(x[0]);
  case Op::Tanh:
    return tanh(x[0]);
  case Op::Sqrt:
    return sqrt(x[0]);
  case Op::Rsqrt:
    return rsqrt(x[0]);
  case Op::Sigmoid:
    return sigmoid(x[0]);
  case Op::Erf:
    return erf(x[0]);
  case Op::Sin:
    return sin(x[0]);
  case Op::Cos:
    return cos(x[0]);
  case Op::Not:
    return ~x[0];
  case Op::Add:
    return x[0] + x[1];
  case Op::Sub:
    return x[0] - x[1];
  case Op::Mul:
    return x[0] * x[1];
  case Op::Div: // true division of integers is f32, as PyTorch's `/`
    return x[0] / x[1];
  case Op::Max:
    return maximum(x[0], x[1]);
  case Op::Min:
    return minimum(x[0], x[1]);
  case Op::Pow:
    return pow(x[0], x[1]);
  case Op::And:
    return x[0] & x[1];
  case Op::Or:
    return x[0] | x[1];
  case Op::Xor:
    return x[0] ^ x[1];
  default:
    return Tensor();
  }
}

/// Operand `which` (0 or 1) of 16 elements in `dtype`.
inline Tensor tableOperand(DType dtype, int which) {
  if (dtype == DType::boolean)
    return from_vector<bool>(
        which == 0 ? std::vector<bool>{0, 1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0}
                   : std::vector<bool>{0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 1},
        {16});
  if (dtype == DType::i32 || dtype == DType::i64)
    return from_vector<int64_t>(which == 0 ? std::vector<int64_t>{-7, -3, -1, 0, 1, 2, 5, 9, 100,
                                                                  -100, 12, -6, 7, 30000, -1, 64}
                                           : std::vector<int64_t>{2, -2, 3, 5, -1, 0, 5, -4, 7, -1,
                                                                  10, 3, 0, 7, 9, -64},
                                {16})
        .to(dtype);
  return from_vector<float>(
             which == 0 ? std::vector<float>{-3.5f, -1.25f, -0.5f, -0.0f, 0.0f, 0.25f, 0.5f, 1.0f,
                                             1.5f, 2.0f, 3.0f, 7.75f, 12.0f, -80.0f, 0.1f, NAN}
                        : std::vector<float>{2.0f, 0.5f, -1.5f, 0.0f, -0.0f, 3.0f, 0.5f, -2.0f,
                                             2.5f, 0.0f, -1.0f, 0.75f, NAN, 1.5f, -0.1f, 1.0f},
             {16})
      .to(dtype);
}

/// One result of opTableStep: which row on which dtype, and the value.
struct TableResult {
  std::string what;
  DType dtype;
  Tensor value;
};

/// Every row of the op table on every dtype it takes.
inline std::vector<TableResult> opTableStep() {
  std::vector<TableResult> results;
  for (const TableRow &row : tableRows())
    for (DType dtype :
         {DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64, DType::boolean}) {
      if (!lazy::accepts(row.operands, dtype))
        continue;
      std::vector<Tensor> x;
      for (int k = 0; k < row.arity; ++k)
        x.push_back(tableOperand(dtype, k));
      Tensor y = throughTheApi(row.op, x);
      std::string what = row.name + " of " + std::string(name(dtype));
      EXPECT_TRUE(y.defined()) << what << ": the test has no API call for this row";
      if (y.defined())
        results.push_back({what, dtype, y});
    }
  return results;
}

/// opTableStep on the reference executor: each result's values.
inline std::vector<std::vector<double>> opTableStepOnTheReference() {
  std::vector<std::vector<double>> values;
  reference::ReferenceGuard oracle;
  for (const TableResult &result : opTableStep())
    values.push_back(result.value.to_vector<double>());
  return values;
}

/// Each of `results` (opTableStep's, run) is the reference's `expected`.
inline void expectOpTableStep(const std::vector<TableResult> &results,
                              const std::vector<std::vector<double>> &expected) {
  ASSERT_EQ(results.size(), expected.size());
  for (size_t k = 0; k < results.size(); ++k) {
    std::vector<double> got = results[k].value.to_vector<double>();
    DType dtype = results[k].value.dtype();
    if (!isFloatingPoint(dtype)) {
      EXPECT_EQ(got, expected[k]) << results[k].what;
      continue;
    }
    // A few units in the last place of the result's dtype, and subnormal
    // f32 results (the reference's double rounded) within 1e-38.
    double ulp = dtype == DType::f32 ? 0x1p-23 : dtype == DType::f16 ? 0x1p-10 : 0x1p-7;
    Comparison c = compare_values(results[k].what, got, expected[k],
                                  {.of_element = 4 * ulp, .absolute = 1e-38});
    EXPECT_TRUE(c.ok) << c.message;
  }
}

} // namespace sinter::test_support

#endif // SINTER_TESTS_COMMON_OPTABLESTEPS_H
