func.func @reshaped_results_are_views(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<2x2x8xf32>, tensor<32xf32>) {
  %r:3 = sinter.fusion %x : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<2x2x8xf32>, tensor<32xf32>) {
  ^bb0(%in: tensor<4x8xf32>):
    %e = sinter.exp %in : tensor<4x8xf32>
    %v = sinter.reshape %e : tensor<4x8xf32> -> tensor<2x2x8xf32>
    %t = sinter.tanh %in : tensor<4x8xf32>
    %w = sinter.reshape %t : tensor<4x8xf32> -> tensor<32xf32>
    sinter.yield %e, %v, %w : tensor<4x8xf32>, tensor<2x2x8xf32>, tensor<32xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<4x8xf32>, tensor<2x2x8xf32>, tensor<32xf32>
}
