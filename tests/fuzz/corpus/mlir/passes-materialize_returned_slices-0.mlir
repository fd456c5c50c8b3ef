func.func @returned_slice(%x: tensor<8xf32>) -> tensor<4xf32> {
  %s = sinter.slice %x, start = [2], limit = [6], step = [1] : tensor<8xf32>
  return %s : tensor<4xf32>
}
