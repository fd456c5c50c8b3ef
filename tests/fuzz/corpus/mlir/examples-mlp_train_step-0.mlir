func.func @mlp_train_step(%x: tensor<64x784xf32>, %labels: tensor<64xi32>,
                          %w1: tensor<128x784xf32>, %b1: tensor<128xf32>,
                          %w2: tensor<10x128xf32>, %b2: tensor<10xf32>)
    -> (tensor<f32>, tensor<128x784xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>) {
  %xw1 = sinter.matmul %x, %w1 transpose_rhs : tensor<64x784xf32>, tensor<128x784xf32>
  %b1b = sinter.broadcast_in_dim %b1, dims = [1] : tensor<128xf32> -> tensor<64x128xf32>
  %z1 = sinter.add %xw1, %b1b : tensor<64x128xf32>
  %zero_h = sinter.constant dense<0.0> : tensor<64x128xf32>
  %h = sinter.max %z1, %zero_h : tensor<64x128xf32>
  %hw2 = sinter.matmul %h, %w2 transpose_rhs : tensor<64x128xf32>, tensor<10x128xf32>
  %b2b = sinter.broadcast_in_dim %b2, dims = [1] : tensor<10xf32> -> tensor<64x10xf32>
  %logits = sinter.add %hw2, %b2b : tensor<64x10xf32>

  %m = sinter.reduce_max %logits, dims = [1] keepdim : tensor<64x10xf32>
  %mb = sinter.broadcast_in_dim %m, dims = [0, 1] : tensor<64x1xf32> -> tensor<64x10xf32>
  %shifted = sinter.sub %logits, %mb : tensor<64x10xf32>
  %e = sinter.exp %shifted : tensor<64x10xf32>
  %s = sinter.reduce_sum %e, dims = [1] keepdim : tensor<64x10xf32>
  %lse = sinter.log %s : tensor<64x1xf32>
  %lseb = sinter.broadcast_in_dim %lse, dims = [0, 1] : tensor<64x1xf32> -> tensor<64x10xf32>
  %logp = sinter.sub %shifted, %lseb : tensor<64x10xf32>

  %classes = sinter.iota dim = 1 : tensor<64x10xi32>
  %lab = sinter.broadcast_in_dim %labels, dims = [0] : tensor<64xi32> -> tensor<64x10xi32>
  %hot = sinter.compare eq, %classes, %lab : tensor<64x10xi32>
  %one = sinter.constant dense<1.0> : tensor<64x10xf32>
  %zero = sinter.constant dense<0.0> : tensor<64x10xf32>
  %onehot = sinter.select %hot, %one, %zero : tensor<64x10xi1>, tensor<64x10xf32>

  %picked = sinter.mul %onehot, %logp : tensor<64x10xf32>
  %total = sinter.reduce_sum %picked, dims = [0, 1] : tensor<64x10xf32>
  %neg_inv_batch = sinter.constant dense<-0.015625> : tensor<f32>
  %loss = sinter.mul %total, %neg_inv_batch : tensor<f32>

  %e_again = sinter.exp %shifted : tensor<64x10xf32>
  %sb = sinter.broadcast_in_dim %s, dims = [0, 1] : tensor<64x1xf32> -> tensor<64x10xf32>
  %softmax = sinter.div %e_again, %sb : tensor<64x10xf32>
  %diff = sinter.sub %softmax, %onehot : tensor<64x10xf32>
  %inv_batch = sinter.constant dense<0.015625> : tensor<64x10xf32>
  %dlogits = sinter.mul %diff, %inv_batch : tensor<64x10xf32>
  %db2 = sinter.reduce_sum %dlogits, dims = [0] : tensor<64x10xf32>
  %dw2 = sinter.matmul %dlogits, %h transpose_lhs : tensor<64x10xf32>, tensor<64x128xf32>
  %w2t = sinter.transpose %w2, perm = [1, 0] : tensor<10x128xf32>
  %w2tt = sinter.transpose %w2t, perm = [1, 0] : tensor<128x10xf32>
  %dh = sinter.matmul %dlogits, %w2tt : tensor<64x10xf32>, tensor<10x128xf32>
  %zero_h_again = sinter.constant dense<0.0> : tensor<64x128xf32>
  %active = sinter.compare gt, %z1, %zero_h_again : tensor<64x128xf32>
  %dz1 = sinter.select %active, %dh, %zero_h_again : tensor<64x128xi1>, tensor<64x128xf32>
  %db1 = sinter.reduce_sum %dz1, dims = [0] : tensor<64x128xf32>
  %dw1 = sinter.matmul %dz1, %x transpose_lhs : tensor<64x128xf32>, tensor<64x784xf32>

  %lr_w1 = sinter.constant dense<0.1> : tensor<128x784xf32>
  %step_w1 = sinter.mul %dw1, %lr_w1 : tensor<128x784xf32>
  %new_w1 = sinter.sub %w1, %step_w1 : tensor<128x784xf32>
  %lr_b1 = sinter.constant dense<0.1> : tensor<128xf32>
  %step_b1 = sinter.mul %db1, %lr_b1 : tensor<128xf32>
  %new_b1 = sinter.sub %b1, %step_b1 : tensor<128xf32>
  %lr_w2 = sinter.constant dense<0.1> : tensor<10x128xf32>
  %step_w2 = sinter.mul %dw2, %lr_w2 : tensor<10x128xf32>
  %new_w2 = sinter.sub %w2, %step_w2 : tensor<10x128xf32>
  %lr_b2 = sinter.constant dense<0.1> : tensor<10xf32>
  %step_b2 = sinter.mul %db2, %lr_b2 : tensor<10xf32>
  %new_b2 = sinter.sub %b2, %step_b2 : tensor<10xf32>
  return %loss, %new_w1, %new_b1, %new_w2, %new_b2
      : tensor<f32>, tensor<128x784xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>
}
