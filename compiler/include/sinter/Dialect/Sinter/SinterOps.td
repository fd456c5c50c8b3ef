//===- SinterOps.td - the sinter dialect's operations ----------*- tablegen -*-===//
//
// The op set covers a whole training step: what the lazy-tensor API records
// for forward and backward, the optimizer update and gradient all-reduce.
// Rules that traits cannot state are checked in C++ verifiers or in result
// type inference (SinterOps.cpp), and every message names the actual shapes.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_DIALECT_SINTER_SINTEROPS_TD
#define SINTER_DIALECT_SINTER_SINTEROPS_TD

include "sinter/Dialect/Sinter/SinterBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

class Sinter_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sinter_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Elementwise unary and binary ops share one assembly form, `%a, %b : T`, and
// one verifier that names mismatched types (see Note [Explicit broadcasting]).
class Sinter_ElementwiseOp<string mnemonic, list<Trait> traits = []>
    : Sinter_Op<mnemonic, !listconcat(traits, [Pure])> {
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::ParseResult $cppClass::parse(::mlir::OpAsmParser &parser,
                                         ::mlir::OperationState &result) {
      return parseElementwiseOp(parser, result);
    }
    void $cppClass::print(::mlir::OpAsmPrinter &printer) {
      printElementwiseOp(printer, getOperation());
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return verifyElementwiseOp(getOperation());
    }
  }];
}

class Sinter_UnaryOp<string mnemonic, Type type, string math, list<Trait> traits = [],
                     string elt = "f32">
    : Sinter_ElementwiseOp<mnemonic, traits> {
  let summary = "elementwise " # math;
  let description = "Computes `" # math # "` for every element of the operand.\n\n"
    # "```mlir\n%r = sinter." # mnemonic # " %x : tensor<4x8x" # elt # ">\n```";
  let arguments = (ins type:$operand);
  let results = (outs type:$result);
}

def Sinter_NegOp : Sinter_UnaryOp<"neg", Sinter_NumericTensor, "-x"> { let hasFolder = 1; }
def Sinter_AbsOp : Sinter_UnaryOp<"abs", Sinter_NumericTensor, "|x|">;
def Sinter_ExpOp : Sinter_UnaryOp<"exp", Sinter_FloatTensor, "e^x">;
def Sinter_LogOp : Sinter_UnaryOp<"log", Sinter_FloatTensor, "ln(x)">;
def Sinter_TanhOp : Sinter_UnaryOp<"tanh", Sinter_FloatTensor, "tanh(x)">;
def Sinter_SqrtOp : Sinter_UnaryOp<"sqrt", Sinter_FloatTensor, "sqrt(x)">;
def Sinter_RsqrtOp : Sinter_UnaryOp<"rsqrt", Sinter_FloatTensor, "1 / sqrt(x)">;
def Sinter_SigmoidOp : Sinter_UnaryOp<"sigmoid", Sinter_FloatTensor, "1 / (1 + e^-x)">;
def Sinter_ErfOp : Sinter_UnaryOp<"erf", Sinter_FloatTensor, "erf(x)">;
def Sinter_SinOp : Sinter_UnaryOp<"sin", Sinter_FloatTensor, "sin(x)">;
def Sinter_CosOp : Sinter_UnaryOp<"cos", Sinter_FloatTensor, "cos(x)">;
def Sinter_NotOp : Sinter_UnaryOp<"not", Sinter_BoolTensor, "logical not of x", [], "i1">;

class Sinter_BinaryOp<string mnemonic, Type type, string math, list<Trait> traits = [],
                      string elt = "f32">
    : Sinter_ElementwiseOp<mnemonic, traits> {
  let summary = "elementwise " # math;
  let description = "Computes `" # math # "` elementwise. Both operands and the "
    # "result have the same type; broadcast first with `sinter.broadcast_in_dim`.\n\n"
    # "```mlir\n%r = sinter." # mnemonic # " %a, %b : tensor<4x8x" # elt # ">\n```";
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
}

def Sinter_AddOp : Sinter_BinaryOp<"add", Sinter_NumericTensor, "a + b", [Commutative]> {
  let hasFolder = 1;
  // The sum of two concats along one dim is a concat of sums (gradients of
  // slices that tile a tensor become one concat of the parts).
  let hasCanonicalizer = 1;
}
def Sinter_SubOp : Sinter_BinaryOp<"sub", Sinter_NumericTensor, "a - b"> { let hasFolder = 1; }
def Sinter_MulOp : Sinter_BinaryOp<"mul", Sinter_NumericTensor, "a * b", [Commutative]> {
  let hasFolder = 1;
}
def Sinter_DivOp : Sinter_BinaryOp<"div", Sinter_NumericTensor, "a / b"> { let hasFolder = 1; }
def Sinter_MaxOp : Sinter_BinaryOp<"max", Sinter_NumericTensor, "max(a, b)", [Commutative]>;
def Sinter_MinOp : Sinter_BinaryOp<"min", Sinter_NumericTensor, "min(a, b)", [Commutative]>;
def Sinter_PowOp : Sinter_BinaryOp<"pow", Sinter_FloatTensor, "a ^ b"> {
  // pow(x, 2) and pow(x, 3) become multiplications.
  let hasCanonicalizer = 1;
}
def Sinter_AndOp : Sinter_BinaryOp<"and", Sinter_LogicalTensor, "a and b", [Commutative], "i1">;
def Sinter_OrOp : Sinter_BinaryOp<"or", Sinter_LogicalTensor, "a or b", [Commutative], "i1">;
def Sinter_XorOp : Sinter_BinaryOp<"xor", Sinter_LogicalTensor, "a xor b", [Commutative], "i1">;

def Sinter_CompareOp : Sinter_Op<"compare", [Pure, InferTypeOpAdaptor,
    AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "elementwise comparison, giving booleans";
  let description = [{
    Compares two tensors of the same type element by element with the given
    direction (`eq`, `ne`, `lt`, `le`, `gt`, `ge`) and returns an `i1` tensor of
    their shape. Floating-point comparisons are ordered: any comparison with NaN
    is false, except `ne`.

    ```mlir
    %mask = sinter.compare gt, %x, %zero : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Sinter_ComparisonDirectionAttr:$direction,
                       Sinter_Tensor:$lhs, Sinter_Tensor:$rhs);
  let results = (outs Sinter_BoolTensor:$result);
  let assemblyFormat = "`` $direction `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
}

def Sinter_SelectOp : Sinter_Op<"select", [Pure,
    AllTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "elementwise choice between two tensors";
  let description = [{
    Returns `on_true` where `pred` is true and `on_false` elsewhere. `pred` has
    the shape of the values.

    ```mlir
    %r = sinter.select %mask, %x, %zero : tensor<4x8xi1>, tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Sinter_BoolTensor:$pred, Sinter_Tensor:$on_true, Sinter_Tensor:$on_false);
  let results = (outs Sinter_Tensor:$result);
  let assemblyFormat = "$pred `,` $on_true `,` $on_false attr-dict `:` type($pred) `,` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Sinter_ConvertOp : Sinter_Op<"convert", [Pure]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts every element to the result's element type, as C++'s
    `static_cast` does (floats to integers round toward zero; to `i1`, nonzero
    is true). The shape stays the same.

    ```mlir
    %h = sinter.convert %x : tensor<4x8xf32> -> tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Sinter_Tensor:$operand);
  let results = (outs Sinter_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Shape and layout
//===----------------------------------------------------------------------===//

def Sinter_BroadcastInDimOp : Sinter_Op<"broadcast_in_dim", [Pure]> {
  let summary = "broadcast a tensor to a larger shape";
  let description = [{
    Operand dimension `i` becomes result dimension `dims[i]`; it must have the
    result's size or size 1 (then it is repeated). Result dimensions not named
    in `dims` are new. `dims` is strictly increasing, so this never transposes.
    PyTorch's implicit broadcasting is recorded as this op.

    ```mlir
    %b = sinter.broadcast_in_dim %bias, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Sinter_Tensor:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs Sinter_Tensor:$result);
  let assemblyFormat = "$operand `,` `dims` `=` $dims attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Sinter_ReshapeOp : Sinter_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tensor's elements in another shape";
  let description = [{
    Keeps the elements in row-major order and gives them the result's shape,
    which must hold the same number of elements.

    ```mlir
    %r = sinter.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
    ```
  }];
  let arguments = (ins Sinter_Tensor:$operand);
  let results = (outs Sinter_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Sinter_TransposeOp : Sinter_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permute a tensor's dimensions";
  let description = [{
    Result dimension `i` is operand dimension `perm[i]`.

    ```mlir
    %t = sinter.transpose %x, perm = [1, 0] : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Sinter_Tensor:$operand, DenseI64ArrayAttr:$perm);
  let results = (outs Sinter_Tensor:$result);
  let assemblyFormat = "$operand `,` `perm` `=` $perm attr-dict `:` type($operand)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Sinter_SliceOp : Sinter_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "a strided window of a tensor";
  let description = [{
    Takes, in every dimension `d`, the elements `start[d], start[d] + step[d],
    ...` below `limit[d]`, with `0 <= start <= limit <= size` and `step >= 1`.

    ```mlir
    %s = sinter.slice %x, start = [0, 2], limit = [4, 8], step = [1, 2] : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Sinter_Tensor:$operand, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$step);
  let results = (outs Sinter_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `start` `=` $start `,` `limit` `=` $limit `,` `step` `=` $step attr-dict
    `:` type($operand)
  }];
  let hasFolder = 1;
}

def Sinter_ConcatOp : Sinter_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "join tensors along one dimension";
  let description = [{
    All operands have the same element type and rank and agree in every
    dimension except `dim`, along which they are joined in order.

    ```mlir
    %c = sinter.concat (%a, %b), dim = 0 : tensor<2x8xf32>, tensor<3x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Sinter_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Sinter_Tensor:$result);
  let assemblyFormat = "`(` $inputs `)` `,` `dim` `=` $dim attr-dict `:` type($inputs)";
  let hasFolder = 1;
}

def Sinter_GatherOp : Sinter_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "take slices of a tensor at given indices (embedding lookup)";
  let description = [{
    Selects, along dimension `axis` of `operand`, the slices named by `indices`
    (like `torch.index_select` generalised to any index shape, or `numpy.take`).
    The result's shape is `operand.shape[:axis] + indices.shape +
    operand.shape[axis+1:]`. Indices outside `[0, operand.shape[axis])` are a
    runtime error in checked builds and read as zeros otherwise.

    ```mlir
    %emb = sinter.gather %table[%tokens], axis = 0 : tensor<4096x256xf32>, tensor<8x128xi32>
    ```
  }];
  let arguments = (ins Sinter_Tensor:$operand, Sinter_IntegerTensor:$indices, I64Attr:$axis);
  let results = (outs Sinter_Tensor:$result);
  let assemblyFormat = [{
    $operand `[` $indices `]` `,` `axis` `=` $axis attr-dict `:` type($operand) `,` type($indices)
  }];
}

def Sinter_ScatterAddOp : Sinter_Op<"scatter_add", [Pure,
    AllTypesMatch<["operand", "result"]>]> {
  let summary = "add slices into a tensor at given indices (embedding gradient)";
  let description = [{
    The transpose of `sinter.gather`: returns `operand` with every slice of
    `updates` added at the position its index names along `axis`; repeated
    indices accumulate. `updates` has the shape `sinter.gather` would give for
    the same operand, indices and axis.

    ```mlir
    %g = sinter.scatter_add %zeros[%tokens], %grad, axis = 0
        : tensor<4096x256xf32>, tensor<8x128xi32>, tensor<8x128x256xf32>
    ```
  }];
  let arguments = (ins Sinter_NumericTensor:$operand, Sinter_IntegerTensor:$indices,
                       Sinter_NumericTensor:$updates, I64Attr:$axis);
  let results = (outs Sinter_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `[` $indices `]` `,` $updates `,` `axis` `=` $axis attr-dict
    `:` type($operand) `,` type($indices) `,` type($updates)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sources: constants, iota, random numbers
//===----------------------------------------------------------------------===//

def Sinter_ConstantOp : Sinter_Op<"constant", [Pure, ConstantLike,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    A tensor whose elements are known at compile time.

    ```mlir
    %zero = sinter.constant dense<0.0> : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Sinter_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Sinter_IotaOp : Sinter_Op<"iota", [Pure]> {
  let summary = "count along one dimension";
  let description = [{
    Element `[i0, i1, ...]` of the result is `i<dim>`: 0, 1, 2, ... along `dim`,
    repeated along the other dimensions. Used for positions and index masks.

    ```mlir
    %pos = sinter.iota dim = 1 : tensor<8x128xi64>
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Sinter_NumericTensor:$result);
  let assemblyFormat = "`dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Sinter_RandomOp : Sinter_Op<"random", [Pure]> {
  let summary = "counter-based (Philox 4x32-10) random numbers";
  let description = [{
    Fills the result with numbers drawn from `distribution` (`uniform` on
    [0, 1) or standard `normal`). Element `i` is a pure function of (`seed`,
    `stream`, `i`), computed with the Philox 4x32-10 generator: the same seed
    gives the same numbers on CPU and GPU, whatever the fusion or the order of
    evaluation, so a dropout mask recomputed in the backward pass equals the one
    of the forward pass. `stream` tells apart the random ops of one program.

    ```mlir
    %u = sinter.random uniform, %seed, stream = 3 : tensor<8x128x256xf32>
    ```
  }];
  let arguments = (ins Sinter_RandomDistributionAttr:$distribution, Sinter_SeedTensor:$seed,
                       I64Attr:$stream);
  let results = (outs Sinter_FloatTensor:$result);
  let assemblyFormat = [{
    `` $distribution `,` $seed `,` `stream` `=` $stream attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Sinter_ReduceOp<string mnemonic, string combiner>
    : Sinter_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = combiner # " over some dimensions";
  let description = "Reduces the operand with " # combiner # " over the dimensions "
    # "in `dims`. With `keepdim` those dimensions stay, with size 1 (as in PyTorch); "
    # "otherwise they are removed. Reductions run in a fixed order, so results are "
    # "deterministic.\n\n"
    # "```mlir\n%r = sinter." # mnemonic # " %x, dims = [1] keepdim : tensor<4x8xf32>\n```";
  let arguments = (ins Sinter_NumericTensor:$operand, DenseI64ArrayAttr:$dims, UnitAttr:$keepdim);
  let results = (outs Sinter_NumericTensor:$result);
  let assemblyFormat = [{
    $operand `,` `dims` `=` $dims (`keepdim` $keepdim^)? attr-dict `:` type($operand)
  }];
  let hasFolder = 1;
}

def Sinter_ReduceSumOp : Sinter_ReduceOp<"reduce_sum", "a sum">;
def Sinter_ReduceMaxOp : Sinter_ReduceOp<"reduce_max", "a maximum">;

def Sinter_ArgMaxOp : Sinter_Op<"argmax", [Pure, InferTypeOpAdaptor]> {
  let summary = "index of the largest element along one dimension";
  let description = [{
    Returns, as `i64`, the index of the first largest element along `dim`. With
    `keepdim` the dimension stays with size 1.

    ```mlir
    %pred = sinter.argmax %logits, dim = 1 : tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Sinter_NumericTensor:$operand, I64Attr:$dim, UnitAttr:$keepdim);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $operand `,` `dim` `=` $dim (`keepdim` $keepdim^)? attr-dict `:` type($operand)
  }];
}

//===----------------------------------------------------------------------===//
// Contractions and windows: library calls (cuBLASLt/cuDNN on GPU, oneDNN on CPU)
//===----------------------------------------------------------------------===//

def Sinter_MatmulOp : Sinter_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "matrix product, batched";
  let description = [{
    Multiplies the last two dimensions: `[..., M, K] x [..., K, N] -> [..., M,
    N]`. Leading (batch) dimensions of `lhs` and `rhs` are equal, or `rhs` is a
    plain matrix shared by the whole batch (a linear layer's weight).
    `transpose_lhs` / `transpose_rhs` read that operand's last two dimensions
    swapped, which the backward pass uses instead of explicit transposes;
    canonicalization folds such a `sinter.transpose` of an operand into the
    flag.

    ```mlir
    %y = sinter.matmul %x, %w transpose_rhs : tensor<8x128x256xf32>, tensor<1024x256xf32>
    ```
  }];
  let arguments = (ins Sinter_FloatTensor:$lhs, Sinter_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Sinter_FloatTensor:$result);
  let hasCanonicalizer = 1;
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)? attr-dict
    `:` type($lhs) `,` type($rhs)
  }];
}

// The attributes every conv2d op shares: NCHW activations, OIHW filters.
defvar Sinter_ConvAttrs = (ins DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                               DenseI64ArrayAttr:$dilation, I64Attr:$groups);

def Sinter_Conv2dOp : Sinter_Op<"conv2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D convolution (NCHW input, OIHW filter)";
  let description = [{
    The convolution of `torch.nn.functional.conv2d`: `input` is `[N, C, H, W]`,
    `filter` is `[O, C / groups, KH, KW]`, `stride`, `padding` (symmetric) and
    `dilation` give `[h, w]`. The result is `[N, O, OH, OW]` with
    `OH = (H + 2 * pad_h - dil_h * (KH - 1) - 1) / stride_h + 1`, and so for W.
    A bias is a separate broadcast add, which fusion folds into the epilogue.

    ```mlir
    %y = sinter.conv2d %x, %w, stride = [1, 1], padding = [1, 1], dilation = [1, 1],
        groups = 1 : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = !con((ins Sinter_FloatTensor:$input, Sinter_FloatTensor:$filter),
                       Sinter_ConvAttrs);
  let results = (outs Sinter_FloatTensor:$result);
  let assemblyFormat = "$input `,` $filter `,` " #
    "`stride` `=` $stride `,` `padding` `=` $padding `,` `dilation` `=` $dilation `,` `groups` `=` $groups attr-dict " #
    "`:` type($input) `,` type($filter)";
}

def Sinter_Conv2dBackwardInputOp : Sinter_Op<"conv2d_backward_input", [Pure]> {
  let summary = "gradient of conv2d with respect to its input";
  let description = [{
    Given the gradient of a `sinter.conv2d` result and its filter, returns the
    gradient of its input (a transposed convolution). The result type is the
    input's, which the attributes alone cannot recover when a stride drops
    rows; the verifier checks that a forward conv2d of that shape gives
    `grad_output`'s shape.

    ```mlir
    %dx = sinter.conv2d_backward_input %dy, %w, stride = [1, 1], padding = [1, 1],
        dilation = [1, 1], groups = 1
        : tensor<8x16x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<8x3x32x32xf32>
    ```
  }];
  let arguments = !con((ins Sinter_FloatTensor:$grad_output, Sinter_FloatTensor:$filter),
                       Sinter_ConvAttrs);
  let results = (outs Sinter_FloatTensor:$result);
  let assemblyFormat = "$grad_output `,` $filter `,` " #
    "`stride` `=` $stride `,` `padding` `=` $padding `,` `dilation` `=` $dilation `,` `groups` `=` $groups attr-dict " #
    "`:` type($grad_output) `,` type($filter) `->` type($result)";
  let hasVerifier = 1;
}

def Sinter_Conv2dBackwardFilterOp : Sinter_Op<"conv2d_backward_filter", [Pure]> {
  let summary = "gradient of conv2d with respect to its filter";
  let description = [{
    Given a `sinter.conv2d` input and the gradient of its result, returns the
    gradient of its filter. The result type is the filter's; the verifier checks
    that a forward conv2d of `input` with it gives `grad_output`'s shape.

    ```mlir
    %dw = sinter.conv2d_backward_filter %x, %dy, stride = [1, 1], padding = [1, 1],
        dilation = [1, 1], groups = 1
        : tensor<8x3x32x32xf32>, tensor<8x16x32x32xf32> -> tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = !con((ins Sinter_FloatTensor:$input, Sinter_FloatTensor:$grad_output),
                       Sinter_ConvAttrs);
  let results = (outs Sinter_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad_output `,` " #
    "`stride` `=` $stride `,` `padding` `=` $padding `,` `dilation` `=` $dilation `,` `groups` `=` $groups attr-dict " #
    "`:` type($input) `,` type($grad_output) `->` type($result)";
  let hasVerifier = 1;
}

defvar Sinter_PoolAttrs = (ins DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                               DenseI64ArrayAttr:$padding);

def Sinter_Pool2dOp : Sinter_Op<"pool2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D max or average pooling (NCHW)";
  let description = [{
    Pools `[N, C, H, W]` over `kernel` windows moved by `stride`, with
    symmetric zero `padding` (at most half the window, as in PyTorch; padded
    elements never win a max and are counted by `avg`). The result is
    `[N, C, OH, OW]` with `OH = (H + 2 * pad_h - KH) / stride_h + 1`.

    ```mlir
    %p = sinter.pool2d max, %x, kernel = [2, 2], stride = [2, 2], padding = [0, 0]
        : tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = !con((ins Sinter_PoolKindAttr:$kind, Sinter_FloatTensor:$input),
                       Sinter_PoolAttrs);
  let results = (outs Sinter_FloatTensor:$result);
  let assemblyFormat = "`` $kind `,` $input `,` `kernel` `=` $kernel `,` `stride` `=` $stride `,` `padding` `=` $padding attr-dict `:` type($input)";
}

def Sinter_Pool2dBackwardOp : Sinter_Op<"pool2d_backward", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "gradient of pool2d with respect to its input";
  let description = [{
    Routes the gradient of a `sinter.pool2d` result back to its input: to the
    (first) largest element of each window for `max`, spread evenly for `avg`.
    `grad_output` has the shape the forward pooling of `input` gives.

    ```mlir
    %dx = sinter.pool2d_backward max, %x, %dy, kernel = [2, 2], stride = [2, 2],
        padding = [0, 0] : tensor<8x16x32x32xf32>, tensor<8x16x16x16xf32>
    ```
  }];
  let arguments = !con((ins Sinter_PoolKindAttr:$kind, Sinter_FloatTensor:$input,
                            Sinter_FloatTensor:$grad_output),
                       Sinter_PoolAttrs);
  let results = (outs Sinter_FloatTensor:$result);
  let assemblyFormat = "`` $kind `,` $input `,` $grad_output `,` `kernel` `=` $kernel `,` `stride` `=` $stride `,` `padding` `=` $padding attr-dict " #
    "`:` type($input) `,` type($grad_output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def Sinter_AllReduceOp : Sinter_Op<"all_reduce", [InferTypeOpAdaptor]> {
  let summary = "combine tensors across all ranks (data-parallel gradients)";
  let description = [{
    Every rank contributes its operands and receives, for each, the elementwise
    `sum`, `mean`, `max` or `min` over all ranks. Several operands form one
    bucket, communicated together. The op has side effects (every rank must
    reach it), so it is never removed or merged by CSE.

    ```mlir
    %g0, %g1 = sinter.all_reduce mean, %dw0, %dw1 : tensor<256x256xf32>, tensor<256xf32>
    ```
  }];
  let arguments = (ins Sinter_ReductionKindAttr:$reduction, Variadic<Sinter_NumericTensor>:$inputs);
  let results = (outs Variadic<Sinter_NumericTensor>:$results);
  let assemblyFormat = "`` $reduction `,` $inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

def Sinter_ReduceScatterOp : Sinter_Op<"reduce_scatter", [InferTypeOpAdaptor]> {
  let summary = "combine a tensor across ranks and keep this rank's slice";
  let description = [{
    The 1-D operand holds `ranks` equal slices; every rank receives the
    elementwise `sum`, `mean`, `max` or `min` over all ranks of the slice of
    its own rank (the gradients of a sharded optimizer). A collective, as
    `sinter.all_reduce`: never removed or merged.

    ```mlir
    %g = sinter.reduce_scatter mean, %flat, ranks = 2 : tensor<1024xf32>
    ```
  }];
  let arguments = (ins Sinter_ReductionKindAttr:$reduction, Sinter_NumericTensor:$input,
                       I64Attr:$ranks);
  let results = (outs Sinter_NumericTensor:$result);
  let assemblyFormat = "`` $reduction `,` $input `,` `ranks` `=` $ranks attr-dict `:` type($input)";
}

def Sinter_AllGatherOp : Sinter_Op<"all_gather", [InferTypeOpAdaptor]> {
  let summary = "every rank's tensor, in rank order";
  let description = [{
    The result is the 1-D operands of all `ranks` ranks one after the other,
    on every rank (the parameters of a sharded optimizer). A collective, as
    `sinter.all_reduce`: never removed or merged.

    ```mlir
    %p = sinter.all_gather %shard, ranks = 2 : tensor<512xf32>
    ```
  }];
  let arguments = (ins Sinter_NumericTensor:$input, I64Attr:$ranks);
  let results = (outs Sinter_NumericTensor:$result);
  let assemblyFormat = "$input `,` `ranks` `=` $ranks attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def Sinter_FusionOp : Sinter_Op<"fusion", [IsolatedFromAbove, SingleBlock,
    RecursiveMemoryEffects]> {
  let summary = "a group of ops compiled into one kernel";
  let description = [{
    The fusion pass moves ops that will run as one kernel into the body of a
    `sinter.fusion`. The body's block arguments are the fusion's inputs, in
    order; `sinter.yield` gives its results. Nothing inside reads values from
    outside, so a fusion region is compiled on its own.

    ```mlir
    %y = sinter.fusion %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%xa: tensor<4x8xf32>, %ba: tensor<8xf32>):
      %bb = sinter.broadcast_in_dim %ba, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
      %s = sinter.add %xa, %bb : tensor<4x8xf32>
      sinter.yield %s : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Sinter_Tensor>:$inputs);
  let results = (outs Variadic<Sinter_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  // Results no one uses are dropped; a result that is an input passed
  // through is replaced by the input.
  let hasCanonicalizer = 1;
}

def Sinter_YieldOp : Sinter_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"FusionOp">]> {
  let summary = "the results of a sinter.fusion body";
  let description = [{
    Ends the body of a `sinter.fusion`; its operands become the fusion's
    results.

    ```mlir
    sinter.yield %a, %b : tensor<4x8xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<Sinter_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // SINTER_DIALECT_SINTER_SINTEROPS_TD
