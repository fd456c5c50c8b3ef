func.func @concat_no_inputs() {
  %0 = "sinter.concat"() <{dim = 0 : i64}> : () -> tensor<4xf32>
  return
}
