func.func @reductions(%x: tensor<4x8xf32>) -> (tensor<8xf32>, tensor<f32>) {
  %c = sinter.reduce_sum %x, dims = [0] : tensor<4x8xf32>
  %r = sinter.reduce_sum %x, dims = [1] keepdim : tensor<4x8xf32>
  %rb = sinter.broadcast_in_dim %r, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
  %d = sinter.sub %x, %rb : tensor<4x8xf32>
  %all = sinter.reduce_sum %d, dims = [0, 1] : tensor<4x8xf32>
  return %c, %all : tensor<8xf32>, tensor<f32>
}
