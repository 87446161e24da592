// One weight read by two linears (an artifact holds one op per weight).
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
func.func @f(%x: tensor<?x256xf16>) -> tensor<?x256xf16> {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xf16>
  %w = qtensor.weight "sq.weight" : tensor<256x256xf16>
  %e = tensor.empty(%t) : tensor<?x256xf16>
  %zero = arith.constant 0.0 : f16
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<?x256xf16>) -> tensor<?x256xf16>
  %y1 = linalg.matmul indexing_maps = [#x, #w, #y] ins(%x, %w : tensor<?x256xf16>, tensor<256x256xf16>) outs(%z : tensor<?x256xf16>) -> tensor<?x256xf16>
  %y2 = linalg.matmul indexing_maps = [#x, #w, #y] ins(%y1, %w : tensor<?x256xf16>, tensor<256x256xf16>) outs(%z : tensor<?x256xf16>) -> tensor<?x256xf16>
  return %y2 : tensor<?x256xf16>
}
