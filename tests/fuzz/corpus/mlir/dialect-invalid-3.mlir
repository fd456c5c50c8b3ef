func.func @float_op_on_integers(%a: tensor<4xi32>) {
  %0 = sinter.exp %a : tensor<4xi32>
  return
}
