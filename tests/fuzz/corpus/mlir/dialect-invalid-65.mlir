func.func @all_reduce_empty() {
  "sinter.all_reduce"() <{reduction = #sinter<reduction_kind sum>}> : () -> ()
  return
}
