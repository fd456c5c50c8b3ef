func.func @slice_range(%a: tensor<4x8xf32>) {
  %0 = sinter.slice %a, start = [0, 2], limit = [4, 9], step = [1, 1] : tensor<4x8xf32>
  return
}
