func.func @fusion_reads_outside(%x: tensor<4xf32>) {
  %0 = sinter.fusion : () -> tensor<4xf32> {
    %1 = sinter.neg %x : tensor<4xf32>
    sinter.yield %1 : tensor<4xf32>
  }
  return
}
