// RUN: qopt %qtensor_src/examples/tiny_mlp.mlir --qtensor-cleanup --verify-each | FileCheck %s

// The README's main job: the cleanup pipeline on the example model folds the
// importer's disassemble/assemble round trip and keeps the three linears.

// CHECK-DAG: #ui4_asym_group128 = #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = integer, granularity = group, axis = 1, group_size = 128, scale = f16>
// CHECK-DAG: #si4_group128 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<4x512xf16>)
// CHECK-DAG: %[[GATE:.*]] = qtensor.weight "blk.0.ffn_gate.weight" : !qtensor.tensor<2048x512xf16, #si4_group128>
// CHECK-DAG: %[[UP:.*]] = qtensor.weight "blk.0.ffn_up.weight" : !qtensor.tensor<2048x512xf16, #si4_group128>
// CHECK-DAG: %[[DOWN:.*]] = qtensor.weight "blk.0.ffn_down.weight" : !qtensor.tensor<512x2048xf16, #ui4_asym_group128>
// CHECK-NOT: qtensor.{{assemble|disassemble}}
// CHECK: %[[G:.*]] = qtensor.linear %[[X]], %[[GATE]] accumulate(f32)
// CHECK: %[[U:.*]] = qtensor.linear %[[X]], %[[UP]] accumulate(f32)
// CHECK: qtensor.linear %{{.*}}, %[[DOWN]] accumulate(f32) : tensor<4x2048xf16>, !qtensor.tensor<512x2048xf16, #ui4_asym_group128> -> tensor<4x512xf16>
// CHECK-NOT: qtensor.{{assemble|disassemble}}
