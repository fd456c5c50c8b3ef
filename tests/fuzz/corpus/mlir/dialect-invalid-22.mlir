func.func @slice_step(%a: tensor<4x8xf32>) {
  %0 = sinter.slice %a, start = [0, 0], limit = [4, 8], step = [1, 0] : tensor<4x8xf32>
  return
}
