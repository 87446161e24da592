// A two-layer MLP as a framework exports it: fc1's weight is an external
// ml_program global (the upstream form), fc2's a qtensor.weight read through
// the torch-style linalg.transpose; fc1 adds a bias by broadcasting it into
// the matmul's init; both accumulate into f16 inits, as an f16 export does.
// norm.weight is a plain weight the graph also returns.
#x = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
module {
  ml_program.global private @"fc1.weight"(#ml_program.extern : tensor<512x256xf16>) : tensor<512x256xf16>
  func.func @forward(%x: tensor<?x256xf16>) -> (tensor<?x128xf16>, tensor<128xf16>) {
    %c0 = arith.constant 0 : index
    %t = tensor.dim %x, %c0 : tensor<?x256xf16>
    %w1 = ml_program.global_load_const @"fc1.weight" : tensor<512x256xf16>
    %b1 = qtensor.weight "fc1.bias" : tensor<512xf16>
    %e1 = tensor.empty(%t) : tensor<?x512xf16>
    %bb = linalg.broadcast ins(%b1 : tensor<512xf16>) outs(%e1 : tensor<?x512xf16>) dimensions = [0]
    %h = linalg.matmul indexing_maps = [#x, #w, #y] ins(%x, %w1 : tensor<?x256xf16>, tensor<512x256xf16>) outs(%bb : tensor<?x512xf16>) -> tensor<?x512xf16>
    %w2 = qtensor.weight "fc2.weight" : tensor<128x512xf16>
    %w2e = tensor.empty() : tensor<512x128xf16>
    %w2t = linalg.transpose ins(%w2 : tensor<128x512xf16>) outs(%w2e : tensor<512x128xf16>) permutation = [1, 0]
    %zero = arith.constant 0.0 : f16
    %e2 = tensor.empty(%t) : tensor<?x128xf16>
    %z = linalg.fill ins(%zero : f16) outs(%e2 : tensor<?x128xf16>) -> tensor<?x128xf16>
    %y = linalg.matmul ins(%h, %w2t : tensor<?x512xf16>, tensor<512x128xf16>) outs(%z : tensor<?x128xf16>) -> tensor<?x128xf16>
    %g = qtensor.weight "norm.weight" : tensor<128xf16>
    return %y, %g : tensor<?x128xf16>, tensor<128xf16>
  }
}
