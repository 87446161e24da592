// The FFN of block 0 of the tiny llama, its weights read from a GGUF file.
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
func.func @ffn(%x: tensor<?x256xf16>) -> tensor<?x256xf32> {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xf16>
  %zero = arith.constant 0.0 : f32
  %wu = qtensor.weight "blk.0.ffn_up.weight" : tensor<512x256xf16>
  %eu = tensor.empty(%t) : tensor<?x512xf32>
  %zu = linalg.fill ins(%zero : f32) outs(%eu : tensor<?x512xf32>) -> tensor<?x512xf32>
  %u = linalg.matmul indexing_maps = [#x, #w, #y] ins(%x, %wu : tensor<?x256xf16>, tensor<512x256xf16>) outs(%zu : tensor<?x512xf32>) -> tensor<?x512xf32>
  %uh = arith.truncf %u : tensor<?x512xf32> to tensor<?x512xf16>
  %wd = qtensor.weight "blk.0.ffn_down.weight" : tensor<256x512xf16>
  %ed = tensor.empty(%t) : tensor<?x256xf32>
  %zd = linalg.fill ins(%zero : f32) outs(%ed : tensor<?x256xf32>) -> tensor<?x256xf32>
  %d = linalg.matmul indexing_maps = [#x, #w, #y] ins(%uh, %wd : tensor<?x512xf16>, tensor<256x512xf16>) outs(%zd : tensor<?x256xf32>) -> tensor<?x256xf32>
  return %d : tensor<?x256xf32>
}
