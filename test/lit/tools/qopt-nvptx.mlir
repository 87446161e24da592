// RUN: qopt %s --nvvm-attach-target="chip=sm_90 features=+ptx80" \
// RUN:   --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" \
// RUN:   | FileCheck %s
// RUN: qopt %s --nvvm-attach-target="chip=sm_90 features=+ptx80" \
// RUN:   --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" \
// RUN:   | FileCheck %s --check-prefix=PTX
// RUN: qopt %s --nvvm-attach-target="chip=sm_90 features=+ptx80" \
// RUN:   --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" \
// RUN:   | %python %S/../Inputs/extract_ptx.py %t.ptx
// RUN: FileCheck %s --check-prefix=PTXFILE < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// qopt registers everything the upstream NVPTX pipeline needs (dialects,
// ConvertToLLVM interfaces, the NVVM target and the LLVM IR translations);
// a missing piece crashes upstream without a message, so this runs it end to
// end on a small kernel that scales a vector.

// CHECK: gpu.binary @kernels
// CHECK-SAME: #gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// PTX: .version 8.0
// PTX: .target sm_90
// PTX: .visible .entry scale
// PTX: mul.rn.f32
// PTXFILE: .version 8.0
// PTXFILE-NEXT: .target sm_90
// PTXFILE: .visible .entry scale(
// PTXFILE: mul.rn.f32
// PTXFILE: ret;

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%data: memref<256xf32>, %s: f32) kernel {
      %i = gpu.thread_id x
      %v = memref.load %data[%i] : memref<256xf32>
      %r = arith.mulf %v, %s : f32
      memref.store %r, %data[%i] : memref<256xf32>
      gpu.return
    }
  }
  func.func @launch(%data: memref<256xf32>, %s: f32) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%data : memref<256xf32>, %s : f32)
    return
  }
}
