func.func @transpose_not_permutation(%a: tensor<4x8xf32>) {
  %0 = sinter.transpose %a, perm = [1, 1] : tensor<4x8xf32>
  return
}
