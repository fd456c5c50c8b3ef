func.func @dce_and_collectives(%x: tensor<4xf32>) {
  %0 = sinter.exp %x : tensor<4xf32>
  %1 = sinter.all_reduce sum, %x : tensor<4xf32>
  %2 = sinter.all_reduce sum, %x : tensor<4xf32>
  return
}
