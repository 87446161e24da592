//===- KernelInstances.h - The kernels a module needs -----------*- C++ -*-===//
//
// After qtensor-select-layouts, each quantized qtensor.linear names a
// registry kernel per phase (`qtensor.dispatch`) and what each rank holds
// (`qtensor.placement`). This derives the kernel instances those choices
// need: one per distinct (registry kernel, local N and K, code width and
// sign, group, activation, scale and output dtypes, bias), so identical
// linears share one instance and one file. qtensor-instantiate-kernels and
// `qtc compile` (lib/Compiler/CompileKernels.cpp) both use it, so the
// IR and the artifact name the same instances (docs/kernel-abi.md).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_CONVERSION_KERNELINSTANCES_H
#define QTENSOR_CONVERSION_KERNELINSTANCES_H

#include "qtensor/Conversion/KernelBuilders.h"
#include "qtensor/Conversion/Mixed2416Kernel.h"
#include "qtensor/Conversion/W8A8Kernel.h"
#include "qtensor/Kernels/Capability.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace qtensor {

/// One rank's slice of one linear's weight, run by an instance in a phase.
struct KernelInstanceUse {
  mlir::Operation *linear = nullptr; ///< the qtensor.linear
  std::string weight; ///< the weight's artifact name (through a repack)
  int64_t rank = 0;   ///< the slice; 0 when the weight is stored whole
  int64_t ranks = 1;  ///< stored slices: 1 for single and replicated
  kernels::Phase phase = kernels::Phase::Decode;
};

/// One kernel instance. A native kernel has a spec the builders generate;
/// the full-dequant fallback has none: the runtime runs it with the
/// reference decoder and a float matmul.
struct KernelInstance {
  std::string name; ///< unique in a module: symbol stem and file stem
  const kernels::KernelCapability *capability = nullptr;
  std::optional<QuantKernelSpec> spec;
  /// A mixed_2416 instance (registry id mixed2416_decode_gemv): the spec
  /// of its T = 1 entry; it has one entry per T of [1, 16]
  /// (mixed2416GemvEntries) and serves prefill in chunks of them.
  std::optional<Mixed2416GemvSpec> mixed;
  /// A W8A8 instance (a kernel whose activation_quants is not none): the
  /// spec of its T = 1 GEMV; the quantizer and GEMV for every T of
  /// [1, 16] (w8a8GemvEntries), prefill in chunks of them.
  std::optional<W8A8GemvSpec> w8a8;
  int64_t n = 0, k = 0; ///< local shape
  FloatType activation = FloatType::F16, output = FloatType::F16;
  bool bias = false; ///< the instance adds b (never for row-parallel slices)
  std::vector<KernelInstanceUse> uses; ///< in op order, then rank, phase

  bool fullDequant() const { return !spec && !mixed && !w8a8; }
  /// The phases its uses run in, decode first.
  std::vector<kernels::Phase> phases() const;
};

/// The instances every dispatched linear of `module` needs on `target`
/// (sm_80, sm_90, host), in first-use order. A linear without
/// `qtensor.dispatch` (one select-layouts left out) needs none. Fails, with
/// a diagnostic on the op naming the linear and the kernel, when a dispatch
/// names another target, an unknown kernel, a kernel for another backend,
/// or a kernel no builder generates, or when the linear's signature is
/// outside what the generated kernels take. `activationQuant` is the
/// compile's activation form (select-layouts' activation-quant), which a
/// W8A8 kernel's instance is built for.
mlir::FailureOr<std::vector<KernelInstance>> deriveKernelInstances(
    mlir::ModuleOp module, llvm::StringRef target,
    kernels::ActivationQuant activationQuant = kernels::ActivationQuant::None);

/// The generator family that builds registry kernel `kernel`, or none (the
/// full-dequant fallback, an unknown id).
std::optional<KernelFamily>
kernelFamilyOf(const kernels::KernelCapability &kernel);

/// Entry points, launch and output zeroing of a native instance.
KernelAbi kernelInstanceAbi(const KernelInstance &instance);

/// Generates a native instance into `module` with its family's builder,
/// host code for CPU level `hostCpu`.
mlir::LogicalResult buildKernelInstance(mlir::ModuleOp module,
                                        const KernelInstance &instance,
                                        KernelTarget target,
                                        HostCpuLevel hostCpu);

/// The host twins of GPU instances: the registry's host kernel that reads
/// the same layout with the same contract, built by the same emitter
/// (docs/codegen.md), named `<gpu instance>_host`. A GPU artifact carries
/// them so the runtime and `qtc verify` (L3) run the very bytes the GPU
/// reads on a machine without a GPU. A GPU instance without a host twin
/// (and the full-dequant fallback) gets none.
std::vector<KernelInstance>
hostTwinInstances(llvm::ArrayRef<KernelInstance> instances);

/// The nested module qtensor-instantiate-kernels{host-twins} generates the
/// twins into: a twin's functions carry its GPU instance's symbol names
/// (the ABI is the same), so they need a symbol table of their own.
inline constexpr const char *kHostTwinsModuleName = "qtensor_host_twins";

/// Sets `qtensor.kernels` on every linear the instances serve: per phase,
/// the instance name of each stored slice in rank order.
void annotateKernelInstances(llvm::ArrayRef<KernelInstance> instances);

} // namespace qtensor

#endif // QTENSOR_CONVERSION_KERNELINSTANCES_H
