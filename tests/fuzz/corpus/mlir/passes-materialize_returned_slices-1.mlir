func.func @reshaped_slice(%x: tensor<4x8xf32>) -> tensor<16xf32> {
  %s = sinter.slice %x, start = [2, 0], limit = [4, 8], step = [1, 1] : tensor<4x8xf32>
  %r = sinter.reshape %s : tensor<2x8xf32> -> tensor<16xf32>
  return %r : tensor<16xf32>
}
