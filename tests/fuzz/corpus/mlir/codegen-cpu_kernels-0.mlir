func.func @elementwise(%x: tensor<64x32xf32>, %y: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %0 = sinter.fusion %x, %y : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%a: tensor<64x32xf32>, %b: tensor<64x32xf32>):
    %1 = sinter.add %a, %b : tensor<64x32xf32>
    %2 = sinter.mul %1, %a : tensor<64x32xf32>
    sinter.yield %2 : tensor<64x32xf32>
  }
  return %0 : tensor<64x32xf32>
}

func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = sinter.fusion %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %1 = sinter.reduce_max %a, dims = [1] : tensor<4x8xf32>
    %2 = sinter.broadcast_in_dim %1, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
    %3 = sinter.sub %a, %2 : tensor<4x8xf32>
    %4 = sinter.exp %3 : tensor<4x8xf32>
    %5 = sinter.reduce_sum %4, dims = [1] : tensor<4x8xf32>
    %6 = sinter.broadcast_in_dim %5, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
    %7 = sinter.div %4, %6 : tensor<4x8xf32>
    sinter.yield %7 : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

func.func @bias_gradient(%g: tensor<64x32xf32>) -> tensor<32xf32> {
  %0 = sinter.fusion %g : (tensor<64x32xf32>) -> tensor<32xf32> {
  ^bb0(%a: tensor<64x32xf32>):
    %1 = sinter.reduce_sum %a, dims = [0] : tensor<64x32xf32>
    sinter.yield %1 : tensor<32xf32>
  }
  return %0 : tensor<32xf32>
}

func.func @middle(%g: tensor<4x16x8xf32>) -> tensor<4x8xf32> {
  %0 = sinter.fusion %g : (tensor<4x16x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x16x8xf32>):
    %1 = sinter.reduce_sum %a, dims = [1] : tensor<4x16x8xf32>
    sinter.yield %1 : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

func.func @product(%a: tensor<16x32xf32>, %b: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %0 = sinter.matmul %a, %b : tensor<16x32xf32>, tensor<32x8xf32>
  return %0 : tensor<16x8xf32>
}
