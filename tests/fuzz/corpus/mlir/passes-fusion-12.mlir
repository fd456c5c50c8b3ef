func.func @small_result_outside_a_row_kernel(%m: tensor<4x1xf32>, %x: tensor<2x4x4xf32>) -> (tensor<4x1xi1>, tensor<2x4x4xf32>) {
  %quarter = sinter.constant dense<2.5e-01> : tensor<4x1xf32>
  %mask = sinter.compare gt, %m, %quarter : tensor<4x1xf32>
  %maskf = sinter.convert %mask : tensor<4x1xi1> -> tensor<4x1xf32>
  %b = sinter.broadcast_in_dim %maskf, dims = [1, 2] : tensor<4x1xf32> -> tensor<2x4x4xf32>
  %y = sinter.mul %x, %b : tensor<2x4x4xf32>
  %s = sinter.reduce_sum %y, dims = [2] keepdim : tensor<2x4x4xf32>
  %sb = sinter.broadcast_in_dim %s, dims = [0, 1, 2] : tensor<2x4x1xf32> -> tensor<2x4x4xf32>
  %z = sinter.sub %y, %sb : tensor<2x4x4xf32>
  return %mask, %z : tensor<4x1xi1>, tensor<2x4x4xf32>
}
