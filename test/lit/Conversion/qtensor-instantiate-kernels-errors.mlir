// Bad dispatches and bad options of qtensor-instantiate-kernels: each is a
// diagnostic naming the linear, the phase and the kernel, or the option.
// RUN: qopt %s -split-input-file -verify-diagnostics -qtensor-instantiate-kernels="target=host"
// RUN: not qopt %s -split-input-file -qtensor-instantiate-kernels="target=sm_70" 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not qopt %s -split-input-file -qtensor-instantiate-kernels="lower=llvm" 2>&1 | FileCheck %s --check-prefix=LOWER
// RUN: not qopt %s -split-input-file -qtensor-instantiate-kernels="target=host lower=ptx" 2>&1 | FileCheck %s --check-prefix=HOSTPTX
// RUN: not qopt %s -split-input-file -qtensor-instantiate-kernels="target=host host-twins=true" 2>&1 | FileCheck %s --check-prefix=HOSTTWINS
// RUN: not qopt %s -split-input-file -qtensor-instantiate-kernels="host-twins=true" -qtensor-instantiate-kernels="host-twins=true" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not qopt %s -split-input-file -qtensor-instantiate-kernels="ptx-dir=%t" 2>&1 | FileCheck %s --check-prefix=DIRONLY
// RUN: not qopt %s -split-input-file -qtensor-instantiate-kernels="lower=ptx ptx-dir=%t/missing" 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: qopt %s -split-input-file -qtensor-select-layouts="target=sm_90 phase=decode fallback=allow" -qtensor-instantiate-kernels | FileCheck %s --check-prefix=FALLBACK

// TARGET: error: qtensor-instantiate-kernels: unknown target 'sm_70', expected sm_80, sm_90 or host
// LOWER: for the --lower option: Cannot find option named 'llvm'!
// HOSTPTX: error: qtensor-instantiate-kernels: lower=ptx needs target sm_80 or sm_90, got host
// HOSTTWINS: error: qtensor-instantiate-kernels: host-twins needs target sm_80 or sm_90, got host (a host kernel is its own twin)
// TWICE: error: qtensor-instantiate-kernels: the module already has a @qtensor_host_twins
// DIRONLY: error: qtensor-instantiate-kernels: ptx-dir needs lower=ptx
// NODIR: error: qtensor-instantiate-kernels: ptx-dir '{{.*}}missing' is not an existing directory

// The dispatch was selected for another target.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
#GEMV = #qtensor.layout<family = "decode_gemv", version = 1, encoding = "offset_binary", tile = [1, 32]>
func.func @other_target(%x: tensor<?x256xf16>) -> tensor<?x64xf16> {
  %w = qtensor.weight "w.sm90" {qtensor.prepacked} : !qtensor.tensor<64x256xf16, #W4, #GEMV>
  // expected-error @+1 {{linear 'w.sm90' was dispatched for sm_90, kernels are being generated for host}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "sm_90", decode = "affine_gemv_decode_sm80", layout = #GEMV, repack = prepacked>} : tensor<?x256xf16>, !qtensor.tensor<64x256xf16, #W4, #GEMV> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}

// -----

// A kernel id the registry does not know.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
#GEMV = #qtensor.layout<family = "decode_gemv", version = 1, encoding = "offset_binary", tile = [1, 32]>
func.func @unknown_kernel(%x: tensor<?x256xf16>) -> tensor<?x64xf16> {
  %w = qtensor.weight "w.unknown" {qtensor.prepacked} : !qtensor.tensor<64x256xf16, #W4, #GEMV>
  // expected-error @+1 {{linear 'w.unknown': decode kernel 'affine_gemv_decode_v2': not in the kernel registry}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "host", decode = "affine_gemv_decode_v2", layout = #GEMV, repack = prepacked>} : tensor<?x256xf16>, !qtensor.tensor<64x256xf16, #W4, #GEMV> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}

// -----

// A CUDA kernel in a host dispatch.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
#GEMV = #qtensor.layout<family = "decode_gemv", version = 1, encoding = "offset_binary", tile = [1, 32]>
func.func @wrong_backend(%x: tensor<?x256xf16>) -> tensor<?x64xf16> {
  %w = qtensor.weight "w.backend" {qtensor.prepacked} : !qtensor.tensor<64x256xf16, #W4, #GEMV>
  // expected-error @+1 {{linear 'w.backend': decode kernel 'affine_gemv_decode_sm80': does not run on host}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "host", decode = "affine_gemv_decode_sm80", layout = #GEMV, repack = prepacked>} : tensor<?x256xf16>, !qtensor.tensor<64x256xf16, #W4, #GEMV> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}

// -----

// A hand-written dispatch for a group size the generated kernels do not
// take (admission would have rejected it).
#G96 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 96, scale = f16>
#GEMV = #qtensor.layout<family = "decode_gemv", version = 1, encoding = "offset_binary", tile = [1, 32]>
func.func @group_96(%x: tensor<?x768xf16>) -> tensor<?x64xf16> {
  %w = qtensor.weight "w.g96" {qtensor.prepacked} : !qtensor.tensor<64x768xf16, #G96, #GEMV>
  // expected-error @+1 {{linear 'w.g96': decode kernel 'affine_gemv_decode_host': rank 0 of 1: group size must be 32, 64, 128 (16 for byte codes, or W4 codes without a zero-point) or per-channel, got 96}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "host", decode = "affine_gemv_decode_host", layout = #GEMV, repack = prepacked>} : tensor<?x768xf16>, !qtensor.tensor<64x768xf16, #G96, #GEMV> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}

// -----

// A float32 activation has no generated kernel.
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
#GEMV = #qtensor.layout<family = "decode_gemv", version = 1, encoding = "offset_binary", tile = [1, 32]>
func.func @f32_activation(%x: tensor<?x256xf32>) -> tensor<?x64xf32> {
  %w = qtensor.weight "w.f32" {qtensor.prepacked} : !qtensor.tensor<64x256xf32, #W4, #GEMV>
  // expected-error @+1 {{linear 'w.f32': decode kernel 'affine_gemv_decode_host': activation f32 has no generated kernel (f16, bf16)}}
  %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = #qtensor.dispatch<target = "host", decode = "affine_gemv_decode_host", layout = #GEMV, repack = prepacked>} : tensor<?x256xf32>, !qtensor.tensor<64x256xf32, #W4, #GEMV> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// The full-dequant fallback needs no generated code: the runtime runs it
// with the reference decoder and a float matmul. The linear still names
// its instance.
// FALLBACK-LABEL: func.func @fallback
// FALLBACK: qtensor.kernels = {decode = ["qt_full_dequant_n64_k768_f16_of16"]}
// FALLBACK-NOT: gpu.module
#G96 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 96, scale = f16>
func.func @fallback(%x: tensor<?x768xf16>) -> tensor<?x64xf16> {
  %w = qtensor.weight "w.fallback" : !qtensor.tensor<64x768xf16, #G96>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x768xf16>, !qtensor.tensor<64x768xf16, #G96> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
