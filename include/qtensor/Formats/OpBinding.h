//===- OpBinding.h - Which op runs on which weight and kernel ---*- C++ -*-===//
//
// One `manifest.bindings[i]`: a quantized linear as the compiler decided it
// (docs/manifest.md, "bindings"). It names the weight, its whole [N, K], how
// it is placed over ranks and each rank's slice (the manifest tensor of rank
// r is `<op>@rank<r>` when the op is sliced over two or more ranks, `<op>`
// otherwise), the signature the kernels were admitted for (activation,
// accumulator and output dtypes, the bias epilogue and, for a row-parallel
// op, whether its bias follows the all-reduce), the registry kernel each
// compiled phase runs (or that it runs the full-dequant fallback), and the
// fallback policy the artifact was compiled with.
//
// The runtime plans from these records; the dispatch trace is a diagnostic
// file and the compile report a human one, neither read by the loader. One
// struct, one writer (toJson), one reader (opBindingFromJson), strict like
// the rest of the manifest; validateManifest adds the checks that need the
// other records (each rank's tensor is a quantized manifest tensor).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_OPBINDING_H
#define QTENSOR_FORMATS_OPBINDING_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Kernels/Admission.h"
#include "qtensor/Support/Expected.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace qtensor::artifact {

/// One compiled phase of an op: the registry kernel its entries implement,
/// and whether that is the full-dequant fallback.
struct PhaseBinding {
  kernels::Phase phase = kernels::Phase::Decode;
  std::string kernel; ///< registry id, e.g. affine_gemv_decode_sm80
  bool fallback = false;
  bool operator==(const PhaseBinding &o) const {
    return phase == o.phase && kernel == o.kernel && fallback == o.fallback;
  }
};

struct OpBinding {
  std::string op;       ///< the weight's name, without a rank suffix
  int64_t n = 0, k = 0; ///< the whole weight
  kernels::Topology topology = kernels::Topology::Single;
  /// One slice per rank, in rank order; they tile N (column) or K (row),
  /// and a single or replicated rank holds the whole weight.
  std::vector<kernels::RankSlice> ranks;
  /// Row-parallel over two or more ranks: the bias is added once, after the
  /// all-reduce.
  bool biasAfterReduce = false;
  FloatType activation = FloatType::F16;
  /// How the activations enter the matmul: as given, or quantized per token
  /// by the kernel (`--quant w8a8`; JSON "activation_quant", absent: none).
  kernels::ActivationQuant activationQuant = kernels::ActivationQuant::None;
  FloatType accumulator = FloatType::F32;
  FloatType output = FloatType::F16;
  kernels::Epilogue epilogue = kernels::Epilogue::None;
  /// The compiled phases, decode before prefill, each at most once; empty
  /// when no phase was compiled for the op (it then cannot run).
  std::vector<PhaseBinding> phases;
  kernels::FallbackPolicy fallbackPolicy = kernels::FallbackPolicy::Forbid;

  /// Whether the op's weight is stored as one tensor per rank.
  bool sliced() const {
    return ranks.size() > 1 && (topology == kernels::Topology::Column ||
                                topology == kernels::Topology::Row);
  }
  /// The manifest tensor holding rank `rank`'s weight.
  std::string tensorOf(int64_t rank) const;
  bool operator==(const OpBinding &o) const;
  bool operator!=(const OpBinding &o) const { return !(*this == o); }
};

/// The binding as manifest.json spells it (docs/manifest.schema.json).
nlohmann::json toJson(const OpBinding &b);

/// Reads and checks one binding; `where` ("manifest.bindings[3]") prefixes
/// every error.
Expected<OpBinding> opBindingFromJson(const nlohmann::json &j,
                                      const std::string &where);

} // namespace qtensor::artifact

#endif // QTENSOR_FORMATS_OPBINDING_H
