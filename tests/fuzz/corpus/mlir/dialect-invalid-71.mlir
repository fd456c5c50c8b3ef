func.func @fusion_terminator(%x: tensor<4xf32>) {
  %0 = sinter.fusion %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    "other.terminator"(%a) : (tensor<4xf32>) -> ()
  }
  return
}
