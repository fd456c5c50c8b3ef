func.func @all_reduce_bool(%m: tensor<4xi1>) {
  %0 = sinter.all_reduce sum, %m : tensor<4xi1>
  return
}
