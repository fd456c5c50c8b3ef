func.func @recipe_reads_stored_values(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %x = sinter.add %a, %b : tensor<4x8xf32>
  %s = sinter.reduce_sum %x, dims = [1] keepdim : tensor<4x8xf32>
  %sb = sinter.broadcast_in_dim %s, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
  %c = sinter.sub %x, %sb : tensor<4x8xf32>
  %q = sinter.mul %c, %c : tensor<4x8xf32>
  %v = sinter.reduce_sum %q, dims = [1] keepdim : tensor<4x8xf32>
  %r = sinter.rsqrt %v : tensor<4x1xf32>
  %rb = sinter.broadcast_in_dim %r, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
  %h = sinter.mul %c, %rb : tensor<4x8xf32>
  %y = sinter.exp %h : tensor<4x8xf32>
  %n = sinter.matmul %y, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %d1 = sinter.mul %n, %c : tensor<4x8xf32>
  %d2 = sinter.mul %d1, %rb : tensor<4x8xf32>
  %d3 = sinter.mul %n, %h : tensor<4x8xf32>
  %d4 = sinter.add %d2, %d3 : tensor<4x8xf32>
  return %d4 : tensor<4x8xf32>
}
