//===- Mixed2416Admission.h - Admission of the mixed 2/4/16 GEMV -*- C++ -*-===//
//
// Seed M8.9 0x07D's admission predicate for the mixed 2/4/16 family: the
// kernel runs a tensor only if it reads exactly the tensor's layout id,
// supports its precision-map granularity, decodes its nested qparams (two
// levels, second level first, along the declared axes, in the declared
// packing and dtypes), applies its sparse semantics, sees whole vector
// steps and whole first-level groups in each rank's K slice (local_k %
// vector_k, the slice's offset on a group boundary), takes the rows T, and
// fits the device: threads, registers and shared memory per block. Every
// failed clause is a reason, as admit() (Admission.h) gives for affine
// kernels. MLIR-free: the compiler and the runtime evaluate the same
// structs.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_KERNELS_MIXED2416ADMISSION_H
#define QTENSOR_KERNELS_MIXED2416ADMISSION_H

#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Kernels/Admission.h"

#include <string>
#include <vector>

namespace qtensor::kernels {

/// The capability signature of a mixed 2/4/16 kernel.
struct Mixed2416Capability {
  std::string name;
  LayoutId layout;
  std::vector<PrecisionMapGranularity> mapGranularities;
  std::vector<int64_t> firstGroupSizes; ///< G1 it takes
  /// The nested qparams it decodes: first-level codes and their packing,
  /// the second level's dtypes, the axes (first 1, second 0).
  std::vector<CodeType> firstScaleCodes;
  std::vector<QParamPacking> qparamPackings;
  std::vector<FloatType> secondTypes;
  std::vector<SparseSemantics> sparseSemantics;
  std::vector<FloatType> sparseTypes;
  std::vector<FloatType> activations;
  std::vector<uint32_t> decoderVersions;
  int64_t vectorK = 32; ///< codes one step reads
  TokenRange tokens;
  std::vector<std::string> targets; ///< "sm_80", "sm_90", "host"
  int64_t threadsPerBlock = 128;
  /// The most registers any of its entries takes per thread (ptxas -v,
  /// test/lit/Conversion/mixed2416-gemv-ptxas-gates.mlir) and its static
  /// shared memory per block.
  int64_t registersPerThread = 0;
  int64_t sharedBytesPerBlock = 0;
};

/// The generated mixed 2/4/16 decode GEMV (Conversion/Mixed2416Kernel.h).
const Mixed2416Capability &mixed2416DecodeGemvCapability();

/// The mixed 2/4/16 GEMV as the kernel a selection names (its id, phases,
/// layout, tokens, backends). It is not in the builtin registry: the
/// affine predicate (admit) does not describe it; admitMixed2416 does.
const KernelCapability &mixed2416KernelCapability();

/// What a block may use on a device.
struct BlockLimits {
  int64_t threads = 1024;
  int64_t registers = 65536;
  int64_t sharedBytes = 48 * 1024; ///< without an opt-in
};
/// sm_80 and sm_90 (and the host, which has no such limits).
BlockLimits blockLimitsOf(const Target &target);

/// Every clause of the predicate for `kernel` on the tensor `d` with these
/// activations and rows, each rank's slice and the target.
Verdict admitMixed2416(const Mixed2416Capability &kernel,
                       const Mixed2416Descriptor &d, FloatType activation,
                       int64_t tokens, const std::vector<RankSlice> &ranks,
                       const Target &target);

/// planDispatch for a signature with a mixed_2416 descriptor: per phase,
/// admitMixed2416 for every T the phase runs the kernel at (decode: its
/// range; prefill: chunks of at most 16 rows, so T = 1 and 16), then every
/// registry kernel for the trace (they read affine codes and reject it).
/// The weight stays in its stored layout, which is the kernel's.
DispatchPlan planMixed2416Dispatch(const KernelRegistry &registry,
                                   const OpSignature &sig,
                                   const DispatchQuery &query);

} // namespace qtensor::kernels

#endif // QTENSOR_KERNELS_MIXED2416ADMISSION_H
