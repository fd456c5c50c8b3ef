func.func @dynamic_shape(%a: tensor<?xf32>) {
  %0 = sinter.neg %a : tensor<?xf32>
  return
}
