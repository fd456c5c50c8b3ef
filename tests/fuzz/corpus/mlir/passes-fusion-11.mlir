func.func @scalars_copied(%lr: tensor<f32>, %scale: tensor<f32>,
                          %w1: tensor<256x256xf32>, %g1: tensor<256x256xf32>,
                          %w2: tensor<256x256xf32>, %g2: tensor<256x256xf32>,
                          %b1: tensor<8xf32>, %h1: tensor<8xf32>,
                          %b2: tensor<8xf32>, %h2: tensor<8xf32>)
    -> (tensor<256x256xf32>, tensor<256x256xf32>, tensor<8xf32>, tensor<8xf32>) {
  %s = sinter.mul %lr, %scale : tensor<f32>
  %big = sinter.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<256x256xf32>
  %d1 = sinter.mul %g1, %big : tensor<256x256xf32>
  %n1 = sinter.sub %w1, %d1 : tensor<256x256xf32>
  %d2 = sinter.mul %g2, %big : tensor<256x256xf32>
  %n2 = sinter.sub %w2, %d2 : tensor<256x256xf32>
  %small = sinter.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<8xf32>
  %e1 = sinter.mul %h1, %small : tensor<8xf32>
  %m1 = sinter.sub %b1, %e1 : tensor<8xf32>
  %e2 = sinter.mul %h2, %small : tensor<8xf32>
  %m2 = sinter.sub %b2, %e2 : tensor<8xf32>
  return %n1, %n2, %m1, %m2 : tensor<256x256xf32>, tensor<256x256xf32>, tensor<8xf32>, tensor<8xf32>
}
