func.func @identity_layout_ops(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = sinter.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = sinter.transpose %x, perm = [0, 1] : tensor<4x8xf32>
  %2 = sinter.broadcast_in_dim %x, dims = [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = sinter.convert %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = sinter.slice %x, start = [0, 0], limit = [4, 8], step = [1, 1] : tensor<4x8xf32>
  %5 = sinter.concat (%x), dim = 1 : tensor<4x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
