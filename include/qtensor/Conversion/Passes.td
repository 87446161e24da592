//===- Passes.td - qtensor kernel generation and lowering --*- tablegen -*-===//
//
// Code generation for quantized linears (issue 5): building the kernels with
// upstream dialects, and lowering them to PTX.
//
//===----------------------------------------------------------------------===//

#ifndef QTENSOR_CONVERSION_PASSES
#define QTENSOR_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def QTensorGenerateKernelsPass
    : Pass<"qtensor-generate-kernels", "::mlir::ModuleOp"> {
  let summary = "Build quantized linear kernels with gpu/nvgpu/vector/arith/memref/scf";
  let description = [{
    Appends one kernel per entry of `kernels` to the module. Each entry is a
    kernel spec `family:wB:gG|gch:sym|asym:f16|bf16:tT:nN:kK[:sS]`, e.g.
    `decode_gemv:w4:g128:sym:f16:t4:n4096:k4096:s2`. For `target=sm_80` or
    `sm_90` each kernel becomes `gpu.module @<name>` holding a `gpu.func
    @<name> kernel` (the module gets `gpu.container_module`); for
    `target=host` it becomes a `func.func @<name>` with a C interface that
    runs the same per-lane arithmetic in loops (see KernelBuilders.h).

    ```mlir
    // qopt --qtensor-generate-kernels="target=sm_90 kernels=decode_gemv:w4:g128:sym:f16:t1:n64:k256"
    gpu.module @qt_decode_gemv_w4sym_g128_f16_t1_n64_k256_s1 {
      gpu.func @qt_decode_gemv_w4sym_g128_f16_t1_n64_k256_s1(
          %x: memref<1x256xf16>, %w: memref<64x32xi32>,
          %s: memref<64x2xf16>, %y: memref<1x64xf32>) kernel ...
    }
    ```

    `prefill_mma` specs build the tensor-core GEMM (cp.async double
    buffering, ldmatrix, mma.sync m16n8k16; see docs/codegen.md) and may
    leave T out: `prefill_mma:w4:g128:asym:f16:n4096:k4096:of16` serves any
    T. Its device code also uses the nvgpu, NVVM and LLVM dialects.

    `mixed2416_gemv:gG1:zG2:f16|bf16:tT:nN:kK[:OPT]` specs build the decode
    GEMV of the mixed 2/4/16 family, which reads the family's streams
    (Conversion/Mixed2416Kernel.h). `w8a8_gemv:gG|gch:sym|asym:sym|asym:...`
    specs build the per-token int8 activation quantizer and the W8A8 GEMV
    (Conversion/W8A8Kernel.h).

    A malformed spec, an unsupported variant or a duplicate kernel is an
    error naming the spec; nothing is built then.
  }];
  let options = [
    ListOption<"kernels", "kernels", "std::string",
               "Kernel specs family:wB:gG|gch:sym|asym:f16|bf16:tT:nN:kK[:sS]">,
    Option<"target", "target", "std::string", /*default=*/"\"sm_90\"",
           "sm_80, sm_90 (gpu.module kernels) or host (func.func)">,
    Option<"hostCpu", "host-cpu", "std::string", /*default=*/"\"generic\"",
           "CPU level host kernels are built for: generic, x86-64-v2, "
           "x86-64-v3, x86-64-v4, x86-64-v4-vnni or x86-64-v4-amx (qtc "
           "compile --host-cpu); from v3 the host GEMM's int8 activations "
           "use AVX2's u8 x s8 multiply, at v4-amx its T > 1 AMX tiles">,
  ];
  let dependentDialects = [
    "::mlir::amx::AMXDialect",
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def QTensorLowerToPTXPass : Pass<"qtensor-lower-to-ptx", "::mlir::ModuleOp"> {
  let summary = "Lower every gpu.module to a gpu.binary holding PTX";
  let description = [{
    Validates the target first (upstream hard-aborts on some chip/PTX
    combinations, e.g. sm_90 below PTX 7.8), then attaches
    `#nvvm.target<chip, +ptxNN>` to every `gpu.module`, converts the device
    code to NVVM (SCF to CF, GPU/vector/arith/memref to LLVM+NVVM) and
    serializes each module with `gpu-module-to-binary{format=isa}`, so the
    `#gpu.object` of each `gpu.binary` holds PTX text. Host code is left
    alone. With `ptx-dir`, the PTX of each binary is also written to
    `<ptx-dir>/<binary name>.ptx`.

    ```mlir
    // qopt --qtensor-lower-to-ptx="chip=sm_90 ptx-version=80"
    gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">,
                               assembly = "...">]
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target: sm_80 or sm_90">,
    Option<"ptxVersion", "ptx-version", "unsigned", /*default=*/"0",
           "PTX ISA version times ten (e.g. 78); 0 picks the chip's minimum "
           "(sm_80: 70, sm_90: 78)">,
    Option<"optLevel", "opt-level", "unsigned", /*default=*/"3",
           "LLVM optimization level for the NVPTX backend (0-3)">,
    Option<"ptxDir", "ptx-dir", "std::string", /*default=*/"\"\"",
           "Also write one <kernel>.ptx file per gpu.binary into this "
           "existing directory">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect"
  ];
}

def QTensorInstantiateKernelsPass
    : Pass<"qtensor-instantiate-kernels", "::mlir::ModuleOp"> {
  let summary = "Generate the kernel instances the dispatched linears need";
  let description = [{
    Derives, from each `qtensor.linear`'s `qtensor.dispatch` (the registry
    kernel of each phase) and `qtensor.placement` (each rank's local N and
    K), one kernel instance per distinct (kernel, local shape, code width
    and sign, group, activation, scale and output dtypes, bias), so
    identical linears share an instance (include/qtensor/Conversion/
    KernelInstances.h, the same derivation `qtc compile` uses). Each native
    instance is generated with its family's builder: for `target=sm_80` or
    `sm_90` a `gpu.module` holding one kernel per entry point, for
    `target=host` C-interface `func.func`s. The full-dequant fallback needs
    no code. Every linear gets `qtensor.kernels`, the instance of each
    stored slice per phase:

    ```mlir
    %y = qtensor.linear %x, %w accumulate(f32) {qtensor.dispatch = ...,
        qtensor.kernels = {decode = ["qt_decode_gemv_w4sym_g128_f16_tdyn_n256_k256_s1_of16"]}}
    ```

    With `host-twins` (sm_80, sm_90) each native instance's host twin, the
    registry's host kernel reading the same layout, is generated into a
    nested `module @qtensor_host_twins` as C-interface `func.func`s with the
    GPU instance's entry names: what a machine without a GPU runs to check
    the bytes the GPU reads (`qtc verify` L3). `lower=ptx` leaves them
    alone.

    With `lower=ptx` the gpu.modules are then lowered to `gpu.binary` ops
    holding PTX (as qtensor-lower-to-ptx does) and, with `ptx-dir`, written
    to `<ptx-dir>/<instance>.ptx`. A dispatch for another target, an
    unknown kernel, a kernel no builder generates or a signature outside
    the generated kernels' limits is an error naming the linear and kernel.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"sm_90\"",
           "sm_80, sm_90 (gpu.module kernels) or host (func.func); must be "
           "the target the dispatch was selected for">,
    Option<"lower", "lower", "::mlir::qt::KernelLowering",
           /*default=*/"::mlir::qt::KernelLowering::None",
           "none (leave the kernels in the IR) or ptx (lower them to "
           "gpu.binary ops holding PTX; sm_80 and sm_90 only)",
           [{::mlir::qt::kernelLoweringValues()}]>,
    Option<"ptxDir", "ptx-dir", "std::string", /*default=*/"\"\"",
           "With lower=ptx: also write <instance>.ptx into this existing "
           "directory">,
    Option<"hostTwins", "host-twins", "bool", /*default=*/"false",
           "sm_80 and sm_90: also generate each native instance's host "
           "twin into a nested module @qtensor_host_twins">,
    Option<"activationQuant", "activation-quant", "std::string",
           /*default=*/"\"none\"",
           "The compile's activation form (select-layouts' "
           "activation-quant): none, per_token_sym or per_token_asym, "
           "which a W8A8 kernel's instances are built for">,
    Option<"hostCpu", "host-cpu", "std::string", /*default=*/"\"generic\"",
           "CPU level host kernels are built for: generic, x86-64-v2, "
           "x86-64-v3, x86-64-v4, x86-64-v4-vnni or x86-64-v4-amx (qtc "
           "compile --host-cpu); from v3 the host GEMM's int8 activations "
           "use AVX2's u8 x s8 multiply, at v4-amx its T > 1 AMX tiles">,
  ];
  let dependentDialects = [
    "::mlir::amx::AMXDialect",
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // QTENSOR_CONVERSION_PASSES
