func.func @select_pred_shape(%p: tensor<4x3xi1>, %a: tensor<4xf32>) {
  %0 = sinter.select %p, %a, %a : tensor<4x3xi1>, tensor<4xf32>
  return
}
