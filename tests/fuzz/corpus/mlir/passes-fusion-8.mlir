func.func @store_when_recomputing_reads_more(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %s = sinter.add %x, %z : tensor<4x8xf32>
  %y = sinter.exp %s : tensor<4x8xf32>
  %n = sinter.matmul %y, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %d = sinter.mul %n, %s : tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}
