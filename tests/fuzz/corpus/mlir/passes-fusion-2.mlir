func.func @layout_consumers(%b: tensor<8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<3xf32>) {
  %n = sinter.neg %b : tensor<8xf32>
  %bb = sinter.broadcast_in_dim %n, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %e = sinter.exp %bb : tensor<4x8xf32>
  %r = sinter.reduce_sum %x, dims = [0, 1] : tensor<4x8xf32>
  %rb = sinter.broadcast_in_dim %r, dims = [] : tensor<f32> -> tensor<3xf32>
  %l = sinter.log %rb : tensor<3xf32>
  return %e, %l : tensor<4x8xf32>, tensor<3xf32>
}
