func.func @chain(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = sinter.matmul %x, %x : tensor<8x8xf32>, tensor<8x8xf32>
  %b = sinter.matmul %a, %x : tensor<8x8xf32>, tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}
