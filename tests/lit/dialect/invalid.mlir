// Every verifier rule of the sinter dialect, each with the message it gives.
// RUN: sinter-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

func.func @binary_operand_types(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{'sinter.add' op lhs has type 'tensor<4xf32>' but rhs has type 'tensor<3xf32>'; broadcast explicitly with sinter.broadcast_in_dim}}
  %0 = "sinter.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @binary_result_type(%a: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.mul' op result has type 'tensor<4xf16>' but its operands have type 'tensor<4xf32>'}}
  %0 = sinter.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @unary_result_type(%a: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.exp' op result has type 'tensor<2x2xf32>' but its operands have type 'tensor<4xf32>'}}
  %0 = "sinter.exp"(%a) : (tensor<4xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @float_op_on_integers(%a: tensor<4xi32>) {
  // expected-error@+1 {{'sinter.exp' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = sinter.exp %a : tensor<4xi32>
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?xf32>) {
  // expected-error@+1 {{'sinter.neg' op operand #0 must be statically shaped tensor}}
  %0 = sinter.neg %a : tensor<?xf32>
  return
}

// -----

func.func @unsupported_element_type(%a: tensor<4xf64>) {
  // expected-error@+1 {{'sinter.neg' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values}}
  %0 = sinter.neg %a : tensor<4xf64>
  return
}

// -----

func.func @compare_operand_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+1 {{'sinter.compare' op failed to verify that all of {lhs, rhs} have same type}}
  %0 = "sinter.compare"(%a, %b) <{direction = #sinter<comparison_direction lt>}> : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_result_shape(%a: tensor<4xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{'sinter.compare' op inferred type(s) 'tensor<4xi1>' are incompatible with return type(s) of operation 'tensor<2xi1>'}}
  %0 = "sinter.compare"(%a, %a) <{direction = #sinter<comparison_direction lt>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<2xi1>
  return
}

// -----

func.func @select_pred_shape(%p: tensor<4x3xi1>, %a: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.select' op pred has shape [4, 3] but the values have shape [4]}}
  %0 = sinter.select %p, %a, %a : tensor<4x3xi1>, tensor<4xf32>
  return
}

// -----

func.func @select_value_types(%p: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+1 {{'sinter.select' op failed to verify that all of {on_true, on_false, result} have same type}}
  %0 = "sinter.select"(%p, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @convert_shape(%a: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.convert' op operand has shape [4] but the result has shape [2, 2]; sinter.convert changes only the element type}}
  %0 = sinter.convert %a : tensor<4xf32> -> tensor<2x2xf16>
  return
}

// -----

func.func @broadcast_element_type(%a: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.broadcast_in_dim' op operand element type 'f32' differs from result element type 'f16'}}
  %0 = sinter.broadcast_in_dim %a, dims = [1] : tensor<4xf32> -> tensor<2x4xf16>
  return
}

// -----

func.func @broadcast_dims_count(%a: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.broadcast_in_dim' op dims has 2 entries but the operand 'tensor<4xf32>' has rank 1}}
  %0 = sinter.broadcast_in_dim %a, dims = [0, 1] : tensor<4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @broadcast_dim_range(%a: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.broadcast_in_dim' op dims[0] = 2 is out of range for the result 'tensor<2x4xf32>' (rank 2)}}
  %0 = sinter.broadcast_in_dim %a, dims = [2] : tensor<4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @broadcast_dims_order(%a: tensor<4x4xf32>) {
  // expected-error@+1 {{'sinter.broadcast_in_dim' op dims must be strictly increasing, got [1, 0]}}
  %0 = sinter.broadcast_in_dim %a, dims = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @broadcast_sizes(%a: tensor<3xf32>) {
  // expected-error@+1 {{'sinter.broadcast_in_dim' op operand dimension 0 of size 3 cannot broadcast to result dimension 1 of size 4 ([3] -> [2, 4])}}
  %0 = sinter.broadcast_in_dim %a, dims = [1] : tensor<3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @reshape_element_type(%a: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.reshape' op operand element type 'f32' differs from result element type 'i32'}}
  %0 = sinter.reshape %a : tensor<4xf32> -> tensor<2x2xi32>
  return
}

// -----

func.func @reshape_count(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.reshape' op cannot reshape [4, 8] (32 elements) to [5, 6] (30 elements)}}
  %0 = sinter.reshape %a : tensor<4x8xf32> -> tensor<5x6xf32>
  return
}

// -----

func.func @transpose_perm_size(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.transpose' op perm [0] has 1 entries but the operand 'tensor<4x8xf32>' has rank 2}}
  %0 = sinter.transpose %a, perm = [0] : tensor<4x8xf32>
  return
}

// -----

func.func @transpose_not_permutation(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.transpose' op perm [1, 1] is not a permutation of 0..1}}
  %0 = sinter.transpose %a, perm = [1, 1] : tensor<4x8xf32>
  return
}

// -----

func.func @transpose_result(%a: tensor<4x8xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{'sinter.transpose' op inferred type(s) 'tensor<8x4xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  %0 = "sinter.transpose"(%a) <{perm = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_sizes(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.slice' op start [0], limit [4, 8] and step [1, 1] must each have one entry per dimension of 'tensor<4x8xf32>'}}
  %0 = sinter.slice %a, start = [0], limit = [4, 8], step = [1, 1] : tensor<4x8xf32>
  return
}

// -----

func.func @slice_step(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.slice' op step[1] = 0 must be at least 1}}
  %0 = sinter.slice %a, start = [0, 0], limit = [4, 8], step = [1, 0] : tensor<4x8xf32>
  return
}

// -----

func.func @slice_range(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.slice' op dimension 1 of size 8 cannot be sliced from 2 to 9 (need 0 <= start <= limit <= size)}}
  %0 = sinter.slice %a, start = [0, 2], limit = [4, 9], step = [1, 1] : tensor<4x8xf32>
  return
}

// -----

func.func @concat_no_inputs() {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{'sinter.concat' op needs at least one input}}
  %0 = "sinter.concat"() <{dim = 0 : i64}> : () -> tensor<4xf32>
  return
}

// -----

func.func @concat_dim(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.concat' op dim = 2 is out of range for 'tensor<4x8xf32>' (rank 2)}}
  %0 = sinter.concat (%a, %a), dim = 2 : tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @concat_element_type(%a: tensor<4x8xf32>, %b: tensor<4x8xf16>) {
  // expected-error@+1 {{'sinter.concat' op input #1 has type 'tensor<4x8xf16>' but input #0 has type 'tensor<4x8xf32>'; inputs need the same element type and rank}}
  %0 = sinter.concat (%a, %b), dim = 0 : tensor<4x8xf32>, tensor<4x8xf16>
  return
}

// -----

func.func @concat_shapes(%a: tensor<4x8xf32>, %b: tensor<4x7xf32>) {
  // expected-error@+1 {{'sinter.concat' op input #1 has shape [4, 7] but input #0 has shape [4, 8]; they may differ only in dimension 0}}
  %0 = sinter.concat (%a, %b), dim = 0 : tensor<4x8xf32>, tensor<4x7xf32>
  return
}

// -----

func.func @gather_axis(%t: tensor<100x16xf32>, %i: tensor<8xi32>) {
  // expected-error@+1 {{'sinter.gather' op axis = 2 is out of range for 'tensor<100x16xf32>' (rank 2)}}
  %0 = sinter.gather %t[%i], axis = 2 : tensor<100x16xf32>, tensor<8xi32>
  return
}

// -----

func.func @gather_float_indices(%t: tensor<100x16xf32>, %i: tensor<8xf32>) {
  // expected-error@+1 {{'sinter.gather' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = sinter.gather %t[%i], axis = 0 : tensor<100x16xf32>, tensor<8xf32>
  return
}

// -----

func.func @scatter_axis(%t: tensor<100x16xf32>, %i: tensor<8xi32>, %u: tensor<8x16xf32>) {
  // expected-error@+1 {{'sinter.scatter_add' op axis = -1 is out of range for 'tensor<100x16xf32>' (rank 2)}}
  %0 = sinter.scatter_add %t[%i], %u, axis = -1 : tensor<100x16xf32>, tensor<8xi32>, tensor<8x16xf32>
  return
}

// -----

func.func @scatter_element_type(%t: tensor<100x16xf32>, %i: tensor<8xi32>, %u: tensor<8x16xf16>) {
  // expected-error@+1 {{'sinter.scatter_add' op updates element type 'f16' differs from operand element type 'f32'}}
  %0 = sinter.scatter_add %t[%i], %u, axis = 0 : tensor<100x16xf32>, tensor<8xi32>, tensor<8x16xf16>
  return
}

// -----

func.func @scatter_updates_shape(%t: tensor<100x16xf32>, %i: tensor<8xi32>, %u: tensor<8x15xf32>) {
  // expected-error@+1 {{'sinter.scatter_add' op updates have shape [8, 15] but operand [100, 16] with indices [8] along axis 0 needs [8, 16]}}
  %0 = sinter.scatter_add %t[%i], %u, axis = 0 : tensor<100x16xf32>, tensor<8xi32>, tensor<8x15xf32>
  return
}

// -----

func.func @constant_type() {
  // expected-error@+1 {{'sinter.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "sinter.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<2xf32>
  return
}

// -----

func.func @constant_element_type() {
  // expected-error@+1 {{'sinter.constant' op result #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values}}
  %0 = sinter.constant dense<1.0> : tensor<4xf64>
  return
}

// -----

func.func @iota_dim() {
  // expected-error@+1 {{'sinter.iota' op dim = 2 is out of range for 'tensor<8x128xi64>' (rank 2)}}
  %0 = sinter.iota dim = 2 : tensor<8x128xi64>
  return
}

// -----

func.func @iota_bool() {
  // expected-error@+1 {{'sinter.iota' op result #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values}}
  %0 = sinter.iota dim = 0 : tensor<8xi1>
  return
}

// -----

func.func @random_stream(%seed: tensor<i64>) {
  // expected-error@+1 {{'sinter.random' op stream must be non-negative, got -1}}
  %0 = sinter.random uniform, %seed, stream = -1 : tensor<8xf32>
  return
}

// -----

func.func @random_seed_shape(%seed: tensor<2xi64>) {
  // expected-error@+1 {{'sinter.random' op operand #0 must be 0D tensor of 64-bit signless integer values}}
  %0 = "sinter.random"(%seed) <{distribution = #sinter<random_distribution uniform>, stream = 0 : i64}> : (tensor<2xi64>) -> tensor<8xf32>
  return
}

// -----

func.func @random_integer_result(%seed: tensor<i64>) {
  // expected-error@+1 {{'sinter.random' op result #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = sinter.random uniform, %seed, stream = 0 : tensor<8xi32>
  return
}

// -----

func.func @reduce_dim_range(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.reduce_sum' op reduced dimension = 2 is out of range for 'tensor<4x8xf32>' (rank 2)}}
  %0 = sinter.reduce_sum %a, dims = [2] : tensor<4x8xf32>
  return
}

// -----

func.func @reduce_dim_twice(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.reduce_max' op dims [1, 1] name dimension 1 twice}}
  %0 = sinter.reduce_max %a, dims = [1, 1] : tensor<4x8xf32>
  return
}

// -----

func.func @reduce_result(%a: tensor<4x8xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{'sinter.reduce_sum' op inferred type(s) 'tensor<4x1xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  %0 = "sinter.reduce_sum"(%a) <{dims = array<i64: 1>, keepdim}> : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @argmax_dim(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.argmax' op reduced dimension = -1 is out of range for 'tensor<4x8xf32>' (rank 2)}}
  %0 = sinter.argmax %a, dim = -1 : tensor<4x8xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error@+1 {{'sinter.matmul' op operands need rank 2 or more, got 'tensor<8xf32>' and 'tensor<8x4xf32>'}}
  %0 = sinter.matmul %a, %b : tensor<8xf32>, tensor<8x4xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x4xbf16>) {
  // expected-error@+1 {{'sinter.matmul' op lhs element type 'f32' differs from rhs element type 'bf16'}}
  %0 = sinter.matmul %a, %b : tensor<4x8xf32>, tensor<8x4xbf16>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error@+1 {{'sinter.matmul' op batch dimensions differ: lhs [2, 4, 8] has [2], rhs [3, 8, 4] has [3] (rhs may also be a plain matrix)}}
  %0 = sinter.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x4xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<7x4xf32>) {
  // expected-error@+1 {{'sinter.matmul' op lhs [4, 8] has 8 columns but rhs [7, 4] has 7 rows}}
  %0 = sinter.matmul %a, %b : tensor<4x8xf32>, tensor<7x4xf32>
  return
}

// -----

func.func @matmul_contraction_transposed(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  // expected-error@+1 {{'sinter.matmul' op lhs [4, 8] (transposed) has 4 columns but rhs [4, 8] (transposed) has 8 rows}}
  %0 = sinter.matmul %a, %b transpose_lhs transpose_rhs : tensor<4x8xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @conv_rank(%x: tensor<3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error@+1 {{'sinter.conv2d' op needs a rank-4 NCHW input and OIHW filter, got 'tensor<3x32x32xf32>' and 'tensor<16x3x3x3xf32>'}}
  %0 = sinter.conv2d %x, %w, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1 : tensor<3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv_element_types(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf16>) {
  // expected-error@+1 {{'sinter.conv2d' op input element type 'f32' differs from filter element type 'f16'}}
  %0 = sinter.conv2d %x, %w, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1 : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf16>
  return
}

// -----

func.func @conv_attr_size(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error@+1 {{'sinter.conv2d' op stride [1] needs 2 entries [h, w]}}
  %0 = sinter.conv2d %x, %w, stride = [1], padding = [1, 1], dilation = [1, 1], groups = 1 : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv_attr_value(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error@+1 {{'sinter.conv2d' op padding [-1, 1] entries must be at least 0}}
  %0 = sinter.conv2d %x, %w, stride = [1, 1], padding = [-1, 1], dilation = [1, 1], groups = 1 : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<8x4x32x32xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error@+1 {{'sinter.conv2d' op groups = 4 must be at least 1 and divide both the 4 input channels and the 6 output channels}}
  %0 = sinter.conv2d %x, %w, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 4 : tensor<8x4x32x32xf32>, tensor<6x2x3x3xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<8x4x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error@+1 {{'sinter.conv2d' op input [8, 4, 32, 32] has 4 channels but filter [16, 3, 3, 3] expects 3 x 1 group(s) = 3}}
  %0 = sinter.conv2d %x, %w, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1 : tensor<8x4x32x32xf32>, tensor<16x3x3x3xf32>
  return
}

// -----

func.func @conv_kernel_too_large(%x: tensor<8x3x4x4xf32>, %w: tensor<16x3x5x5xf32>) {
  // expected-error@+1 {{'sinter.conv2d' op the height of the dilated kernel (9) exceeds the padded input (4) for input [8, 3, 4, 4] and filter [16, 3, 5, 5]}}
  %0 = sinter.conv2d %x, %w, stride = [1, 1], padding = [0, 0], dilation = [2, 2], groups = 1 : tensor<8x3x4x4xf32>, tensor<16x3x5x5xf32>
  return
}

// -----

func.func @conv_backward_input_shape(%dy: tensor<8x16x32x32xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error@+1 {{'sinter.conv2d_backward_input' op conv2d of input [8, 3, 32, 32] with filter [16, 3, 3, 3] gives [8, 16, 16, 16] of 'f32', but grad_output is 'tensor<8x16x32x32xf32>'}}
  %0 = sinter.conv2d_backward_input %dy, %w, stride = [2, 2], padding = [1, 1], dilation = [1, 1], groups = 1 : tensor<8x16x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<8x3x32x32xf32>
  return
}

// -----

func.func @conv_backward_filter_shape(%x: tensor<8x3x32x32xf32>, %dy: tensor<8x16x32x32xf32>) {
  // expected-error@+1 {{'sinter.conv2d_backward_filter' op conv2d of input [8, 3, 32, 32] with filter [16, 3, 5, 5] gives [8, 16, 30, 30] of 'f32', but grad_output is 'tensor<8x16x32x32xf32>'}}
  %0 = sinter.conv2d_backward_filter %x, %dy, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1 : tensor<8x3x32x32xf32>, tensor<8x16x32x32xf32> -> tensor<16x3x5x5xf32>
  return
}

// -----

func.func @conv_backward_filter_groups(%x: tensor<8x3x32x32xf32>, %dy: tensor<8x16x32x32xf32>) {
  // expected-error@+1 {{'sinter.conv2d_backward_filter' op groups = 0 must be at least 1 and divide both the 3 input channels and the 16 output channels}}
  %0 = sinter.conv2d_backward_filter %x, %dy, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 0 : tensor<8x3x32x32xf32>, tensor<8x16x32x32xf32> -> tensor<16x3x3x3xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<16x32x32xf32>) {
  // expected-error@+1 {{'sinter.pool2d' op needs a rank-4 NCHW input, got 'tensor<16x32x32xf32>'}}
  %0 = sinter.pool2d max, %x, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<16x32x32xf32>
  return
}

// -----

func.func @pool_attr_size(%x: tensor<8x16x32x32xf32>) {
  // expected-error@+1 {{'sinter.pool2d' op kernel [2, 2, 2] needs 2 entries [h, w]}}
  %0 = sinter.pool2d max, %x, kernel = [2, 2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>
  return
}

// -----

func.func @pool_attr_value(%x: tensor<8x16x32x32xf32>) {
  // expected-error@+1 {{'sinter.pool2d' op stride [0, 2] entries must be at least 1}}
  %0 = sinter.pool2d avg, %x, kernel = [2, 2], stride = [0, 2], padding = [0, 0] : tensor<8x16x32x32xf32>
  return
}

// -----

func.func @pool_padding(%x: tensor<8x16x32x32xf32>) {
  // expected-error@+1 {{'sinter.pool2d' op padding [2, 2] must be at most half of kernel [3, 3]}}
  %0 = sinter.pool2d max, %x, kernel = [3, 3], stride = [1, 1], padding = [2, 2] : tensor<8x16x32x32xf32>
  return
}

// -----

func.func @pool_kernel_too_large(%x: tensor<8x16x2x2xf32>) {
  // expected-error@+1 {{'sinter.pool2d' op kernel [3, 3] is larger than the padded input [8, 16, 2, 2]}}
  %0 = sinter.pool2d max, %x, kernel = [3, 3], stride = [1, 1], padding = [0, 0] : tensor<8x16x2x2xf32>
  return
}

// -----

func.func @pool_backward_shape(%x: tensor<8x16x32x32xf32>, %dy: tensor<8x16x32x32xf32>) {
  // expected-error@+1 {{'sinter.pool2d_backward' op pool2d of input [8, 16, 32, 32] gives [8, 16, 16, 16] of 'f32', but grad_output is 'tensor<8x16x32x32xf32>'}}
  %0 = sinter.pool2d_backward max, %x, %dy, kernel = [2, 2], stride = [2, 2], padding = [0, 0] : tensor<8x16x32x32xf32>, tensor<8x16x32x32xf32>
  return
}

// -----

func.func @all_reduce_empty() {
  // expected-error@+1 {{'sinter.all_reduce' op needs at least one tensor to reduce}}
  "sinter.all_reduce"() <{reduction = #sinter<reduction_kind sum>}> : () -> ()
  return
}

// -----

func.func @all_reduce_bool(%m: tensor<4xi1>) {
  // expected-error@+1 {{'sinter.all_reduce' op operand #0 must be variadic of statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values}}
  %0 = sinter.all_reduce sum, %m : tensor<4xi1>
  return
}

// -----

func.func @fusion_argument_count(%x: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.fusion' op body has 2 arguments but the fusion has 1 inputs}}
  %0 = sinter.fusion %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    sinter.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_argument_type(%x: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.fusion' op input #0 has type 'tensor<4xf32>' but body argument #0 has type 'tensor<4xf16>'}}
  %0 = sinter.fusion %x : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf16>):
    sinter.yield %a : tensor<4xf16>
  }
  return
}

// -----

func.func @fusion_yield_count(%x: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.fusion' op body yields 2 values but the fusion has 1 results}}
  %0 = sinter.fusion %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    sinter.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_yield_type(%x: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.fusion' op result #0 has type 'tensor<4xf16>' but the body yields 'tensor<4xf32>'}}
  %0 = sinter.fusion %x : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf32>):
    sinter.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @fusion_terminator(%x: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.fusion' op body must end with sinter.yield}}
  %0 = sinter.fusion %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    "other.terminator"(%a) : (tensor<4xf32>) -> ()
  }
  return
}

// -----

func.func @fusion_reads_outside(%x: tensor<4xf32>) {
  // expected-note@+1 {{required by region isolation constraints}}
  %0 = sinter.fusion : () -> tensor<4xf32> {
    // expected-error@+1 {{using value defined outside the region}}
    %1 = sinter.neg %x : tensor<4xf32>
    sinter.yield %1 : tensor<4xf32>
  }
  return
}

// -----

func.func @yield_outside_fusion(%x: tensor<4xf32>) {
  // expected-error@+1 {{'sinter.yield' op expects parent op 'sinter.fusion'}}
  sinter.yield %x : tensor<4xf32>
}
