func.func @broadcast_results_move_into_readers(%s: tensor<4x1xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %b:2 = sinter.fusion %s : (tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%in: tensor<4x1xf32>):
    %r = sinter.rsqrt %in : tensor<4x1xf32>
    %wide = sinter.broadcast_in_dim %r, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
    %plain = sinter.broadcast_in_dim %in, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
    sinter.yield %wide, %plain : tensor<4x8xf32>, tensor<4x8xf32>
  }
  %y = sinter.fusion %b#0, %b#1, %x : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%p: tensor<4x8xf32>, %q: tensor<4x8xf32>, %z: tensor<4x8xf32>):
    %m = sinter.mul %p, %z : tensor<4x8xf32>
    %n = sinter.add %m, %q : tensor<4x8xf32>
    sinter.yield %n : tensor<4x8xf32>
  }
  return %y : tensor<4x8xf32>
}
