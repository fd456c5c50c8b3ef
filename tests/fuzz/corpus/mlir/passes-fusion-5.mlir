func.func @locations(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = sinter.exp %x : tensor<4xf32> loc("train.cpp":10:3)
  %b = sinter.neg %a : tensor<4xf32> loc("train.cpp":11:3)
  return %b : tensor<4xf32>
}
