//===- DispatchTrace.h - The dispatch trace (seed 0x07B) --------*- C++ -*-===//
//
// One JSON object per (op, phase): the requested signature, shape, device,
// every candidate with accepted/rejected and its reason, the selection, the
// fallback flag and the repack. The file is a JSON list of these objects,
// written atomically (docs/kernels.md, "Dispatch trace").
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_KERNELS_DISPATCHTRACE_H
#define QTENSOR_KERNELS_DISPATCHTRACE_H

#include "qtensor/Kernels/Admission.h"

#include <nlohmann/json.hpp>

#include <string>

namespace qtensor::kernels {

/// What the trace says about one op beyond its plan.
struct TraceOp {
  std::string name;  ///< the weight's artifact name, or "linear#<index>"
  int64_t index = 0; ///< position among the module's linears
  const OpSignature *signature = nullptr;
  const DispatchPlan *plan = nullptr;
  std::string device;
  RepackKind repack = RepackKind::None;          ///< to plan->layout
  RepackKind secondaryRepack = RepackKind::None; ///< to the secondary copy
};

/// The requested signature as a JSON object. Trace objects keep their keys
/// in the documented order ("op", "phase", ... first) for human readers.
nlohmann::ordered_json signatureToJson(const OpSignature &sig);

/// One object per phase of `op`.
nlohmann::ordered_json traceToJson(const TraceOp &op);

/// A one-line summary of `op` for a remark: request, shape, device, and per
/// phase every candidate with its verdict, the selection, layout and repack.
std::string traceToText(const TraceOp &op);

} // namespace qtensor::kernels

#endif // QTENSOR_KERNELS_DISPATCHTRACE_H
