func.func @contiguous_slices_are_views(%w: tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %s:3 = sinter.fusion %w : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<6x2xf32>, tensor<2x4xf32>) {
  ^bb0(%in: tensor<6x4xf32>):
    %rows = sinter.slice %in, start = [2, 0], limit = [4, 4], step = [1, 1] : tensor<6x4xf32>
    %cols = sinter.slice %in, start = [0, 1], limit = [6, 3], step = [1, 1] : tensor<6x4xf32>
    %kept = sinter.slice %in, start = [4, 0], limit = [6, 4], step = [1, 1] : tensor<6x4xf32>
    sinter.yield %rows, %cols, %kept : tensor<2x4xf32>, tensor<6x2xf32>, tensor<2x4xf32>
  }
  %r = sinter.fusion %s#0, %s#1 : (tensor<2x4xf32>, tensor<6x2xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<6x2xf32>):
    %t = sinter.slice %b, start = [0, 0], limit = [2, 2], step = [1, 1] : tensor<6x2xf32>
    %u = sinter.reshape %t : tensor<2x2xf32> -> tensor<4xf32>
    %v = sinter.reshape %u : tensor<4xf32> -> tensor<1x4xf32>
    %x = sinter.broadcast_in_dim %v, dims = [0, 1] : tensor<1x4xf32> -> tensor<2x4xf32>
    %y = sinter.add %a, %x : tensor<2x4xf32>
    sinter.yield %y : tensor<2x4xf32>
  }
  return %r, %s#2 : tensor<2x4xf32>, tensor<2x4xf32>
}
