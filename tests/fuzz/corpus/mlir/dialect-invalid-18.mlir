func.func @transpose_perm_size(%a: tensor<4x8xf32>) {
  %0 = sinter.transpose %a, perm = [0] : tensor<4x8xf32>
  return
}
