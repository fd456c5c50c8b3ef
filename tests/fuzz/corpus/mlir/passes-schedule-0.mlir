func.func @branches(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> tensor<64xf32> {
  %a = sinter.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32>
  %b = sinter.matmul %y, %x : tensor<64x64xf32>, tensor<64x64xf32>
  %ra = sinter.fusion %a : (tensor<64x64xf32>) -> tensor<64xf32> {
  ^bb0(%in: tensor<64x64xf32>):
    %s = sinter.reduce_sum %in, dims = [1] : tensor<64x64xf32>
    sinter.yield %s : tensor<64xf32>
  }
  %rb = sinter.fusion %b : (tensor<64x64xf32>) -> tensor<64xf32> {
  ^bb0(%in: tensor<64x64xf32>):
    %s = sinter.reduce_sum %in, dims = [1] : tensor<64x64xf32>
    sinter.yield %s : tensor<64xf32>
  }
  %r = sinter.fusion %ra, %rb : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%p: tensor<64xf32>, %q: tensor<64xf32>):
    %s = sinter.add %p, %q : tensor<64xf32>
    sinter.yield %s : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}
