func.func @sums_of_concats(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>, %y: tensor<1x4xf32>, %w: tensor<1x4xf32>, %x: tensor<3x4xf32>, %v: tensor<2x4xf32>) -> (tensor<3x4xf32>, tensor<5x4xf32>) {
  %ones = sinter.constant dense<1.0> : tensor<2x4xf32>
  %p = sinter.concat (%ones, %a), dim = 0 : tensor<2x4xf32>, tensor<1x4xf32>
  %q = sinter.concat (%b, %y, %w), dim = 0 : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
  %0 = sinter.add %p, %q : tensor<3x4xf32>
  %r = sinter.concat (%v, %x), dim = 0 : tensor<2x4xf32>, tensor<3x4xf32>
  %s = sinter.concat (%x, %v), dim = 0 : tensor<3x4xf32>, tensor<2x4xf32>
  %1 = sinter.add %r, %s : tensor<5x4xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<5x4xf32>
}
