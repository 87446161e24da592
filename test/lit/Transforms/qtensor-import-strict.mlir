// RUN: qopt %s -qtensor-import=strict=true -split-input-file -verify-diagnostics | FileCheck %s

// strict=true: each candidate the import leaves alone is an error with the
// reason remarks=true would give, and the pass fails; what imports, and
// what is no candidate at all, passes as without it.

// CHECK-LABEL: func.func @imports
// CHECK: qtensor.assemble
// CHECK-NOT: quant.
func.func @imports(%c: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %q = quant.scast %c : tensor<4x8xi8> to tensor<4x8x!quant.uniform<i8:f32, 0.5>>
  %d = quant.dcast %q : tensor<4x8x!quant.uniform<i8:f32, 0.5>> to tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @no_candidate
// CHECK: arith.mulf
func.func @no_candidate(%w0: tensor<8x16xf16>, %g: tensor<8x16xf16>) -> tensor<8x16xf16> {
  %w = arith.mulf %w0, %g : tensor<8x16xf16>
  return %w : tensor<8x16xf16>
}

// -----

func.func @code_outside_range() -> tensor<4xf32> {
  %c = arith.constant dense<[1, -7, 7, -8]> : tensor<4xi8>
  // expected-error @+1 {{qtensor-import: 'quant.scast' not imported: constant code -8 at flat index 3 is outside the storage range [-7, 7] (strict: every candidate must be imported)}}
  %q = quant.scast %c : tensor<4xi8> to tensor<4x!quant.uniform<i8<-7:7>:f32, 0.5>>
  %d = quant.dcast %q : tensor<4x!quant.uniform<i8<-7:7>:f32, 0.5>> to tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

func.func @dynamic_block_argument(%q: tensor<?x!quant.uniform<i8:f32, 0.5>>) -> tensor<?xf32> {
  // expected-error @+1 {{qtensor-import: 'quant.dcast' of block argument #0 not imported: its shape tensor<?x!quant.uniform<i8:f32, 5.000000e-01>> is dynamic; qtensor tensors have static shapes (strict: every candidate must be imported)}}
  %d = quant.dcast %q : tensor<?x!quant.uniform<i8:f32, 0.5>> to tensor<?xf32>
  return %d : tensor<?xf32>
}

// -----

func.func @arith_scales_along_reduction(%x: tensor<2x16xf16>, %c: tensor<8x16xi8>, %s: tensor<16xf16>) -> tensor<2x8xf16> {
  %f = arith.sitofp %c : tensor<8x16xi8> to tensor<8x16xf16>
  %e = tensor.empty() : tensor<8x16xf16>
  %sb = linalg.broadcast ins(%s : tensor<16xf16>) outs(%e : tensor<8x16xf16>) dimensions = [0]
  // expected-error @+1 {{qtensor-import: dequantization feeding operand #1 of 'linalg.matmul' not imported: the scales vary along axis 1, the dimension the contraction reduces over (K); per-axis weight scales must run along the output channels (strict: every candidate must be imported)}}
  %w = arith.mulf %f, %sb : tensor<8x16xf16>
  %zero = arith.constant 0.0 : f16
  %o = tensor.empty() : tensor<2x8xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%o : tensor<2x8xf16>) -> tensor<2x8xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<2x16xf16>, tensor<8x16xf16>) outs(%acc : tensor<2x8xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}
