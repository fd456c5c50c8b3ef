func.func @fusion_argument_type(%x: tensor<4xf32>) {
  %0 = sinter.fusion %x : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf16>):
    sinter.yield %a : tensor<4xf16>
  }
  return
}
