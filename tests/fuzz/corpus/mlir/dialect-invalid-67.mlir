func.func @fusion_argument_count(%x: tensor<4xf32>) {
  %0 = sinter.fusion %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    sinter.yield %a : tensor<4xf32>
  }
  return
}
