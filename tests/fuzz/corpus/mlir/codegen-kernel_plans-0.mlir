func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = sinter.reduce_max %x, dims = [1] : tensor<4x8xf32>
  %mb = sinter.broadcast_in_dim %m, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = sinter.sub %x, %mb : tensor<4x8xf32>
  %e = sinter.exp %d : tensor<4x8xf32>
  %s = sinter.reduce_sum %e, dims = [1] : tensor<4x8xf32>
  %sb = sinter.broadcast_in_dim %s, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = sinter.div %e, %sb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

func.func @layer_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) {
  %inv = sinter.constant dense<0.125> : tensor<4xf32>
  %eps = sinter.constant dense<1.0e-5> : tensor<4xf32>
  %s = sinter.reduce_sum %x, dims = [1] : tensor<4x8xf32>
  %mean = sinter.mul %s, %inv : tensor<4xf32>
  %mb = sinter.broadcast_in_dim %mean, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %xc = sinter.sub %x, %mb : tensor<4x8xf32>
  %sq = sinter.mul %xc, %xc : tensor<4x8xf32>
  %v = sinter.reduce_sum %sq, dims = [1] : tensor<4x8xf32>
  %var = sinter.mul %v, %inv : tensor<4xf32>
  %ve = sinter.add %var, %eps : tensor<4xf32>
  %r = sinter.rsqrt %ve : tensor<4xf32>
  %rb = sinter.broadcast_in_dim %r, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %xh = sinter.mul %xc, %rb : tensor<4x8xf32>
  %wb = sinter.broadcast_in_dim %w, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %y = sinter.mul %xh, %wb : tensor<4x8xf32>
  return %y, %xc, %r : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
}

func.func @layer_norm_backward(%xc: tensor<4x8xf32>, %r: tensor<4xf32>, %dy: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %inv = sinter.constant dense<0.125> : tensor<4xf32>
  %rb = sinter.broadcast_in_dim %r, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %xh = sinter.mul %xc, %rb : tensor<4x8xf32>
  %wb = sinter.broadcast_in_dim %w, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %g = sinter.mul %dy, %wb : tensor<4x8xf32>
  %s1 = sinter.reduce_sum %g, dims = [1] : tensor<4x8xf32>
  %m1 = sinter.mul %s1, %inv : tensor<4xf32>
  %gx = sinter.mul %g, %xh : tensor<4x8xf32>
  %s2 = sinter.reduce_sum %gx, dims = [1] : tensor<4x8xf32>
  %m2 = sinter.mul %s2, %inv : tensor<4xf32>
  %m1b = sinter.broadcast_in_dim %m1, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %m2b = sinter.broadcast_in_dim %m2, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %a = sinter.sub %g, %m1b : tensor<4x8xf32>
  %b = sinter.mul %xh, %m2b : tensor<4x8xf32>
  %c = sinter.sub %a, %b : tensor<4x8xf32>
  %dx = sinter.mul %c, %rb : tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

func.func @adamw(%p: tensor<256xf32>, %g: tensor<256xf32>, %m: tensor<256xf32>, %v: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) {
  %b1 = sinter.constant dense<0.9> : tensor<256xf32>
  %c1 = sinter.constant dense<0.1> : tensor<256xf32>
  %b2 = sinter.constant dense<0.999> : tensor<256xf32>
  %c2 = sinter.constant dense<0.001> : tensor<256xf32>
  %lr = sinter.constant dense<0.001> : tensor<256xf32>
  %eps = sinter.constant dense<1.0e-8> : tensor<256xf32>
  %decay = sinter.constant dense<0.99999> : tensor<256xf32>
  %m1 = sinter.mul %m, %b1 : tensor<256xf32>
  %m2 = sinter.mul %g, %c1 : tensor<256xf32>
  %mn = sinter.add %m1, %m2 : tensor<256xf32>
  %v1 = sinter.mul %v, %b2 : tensor<256xf32>
  %gg = sinter.mul %g, %g : tensor<256xf32>
  %v2 = sinter.mul %gg, %c2 : tensor<256xf32>
  %vn = sinter.add %v1, %v2 : tensor<256xf32>
  %sq = sinter.sqrt %vn : tensor<256xf32>
  %de = sinter.add %sq, %eps : tensor<256xf32>
  %st = sinter.div %mn, %de : tensor<256xf32>
  %sl = sinter.mul %st, %lr : tensor<256xf32>
  %pd = sinter.mul %p, %decay : tensor<256xf32>
  %pn = sinter.sub %pd, %sl : tensor<256xf32>
  return %pn, %mn, %vn : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
}

func.func @bias_gradient(%g: tensor<64x32xf32>) -> tensor<32xf32> {
  %s = sinter.reduce_sum %g, dims = [0] : tensor<64x32xf32>
  return %s : tensor<32xf32>
}

func.func @chain(%x: tensor<8x6xf32>, %b: tensor<4xf32>) -> tensor<4x8xf32> {
  %t = sinter.transpose %x, perm = [1, 0] : tensor<8x6xf32>
  %s = sinter.slice %t, start = [1, 0], limit = [5, 8], step = [1, 1] : tensor<6x8xf32>
  %bb = sinter.broadcast_in_dim %b, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = sinter.add %s, %bb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
