func.func @iota_bool() {
  %0 = sinter.iota dim = 0 : tensor<8xi1>
  return
}
