func.func @iota_dim() {
  %0 = sinter.iota dim = 2 : tensor<8x128xi64>
  return
}
