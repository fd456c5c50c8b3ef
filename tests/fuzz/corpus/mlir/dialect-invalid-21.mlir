func.func @slice_sizes(%a: tensor<4x8xf32>) {
  %0 = sinter.slice %a, start = [0], limit = [4, 8], step = [1, 1] : tensor<4x8xf32>
  return
}
