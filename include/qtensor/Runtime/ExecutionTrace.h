//===- ExecutionTrace.h - What ran, per op call -----------------*- C++ -*-===//
//
// The run-time half of the dispatch trace (seed M8.9 0x07B, 0x09F): the
// compile-time trace says which kernel each op and phase was admitted to;
// this records, per call, which kernel instance actually ran, on which
// backend, in which phase, for how many rows T, how long it took, and
// whether it was the full-dequant fallback. A successful run can then not
// hide a generic fallback.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_EXECUTIONTRACE_H
#define QTENSOR_RUNTIME_EXECUTIONTRACE_H

#include "qtensor/Kernels/Capability.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace qtensor::runtime {

struct DispatchRecord {
  std::string op;      ///< manifest tensor
  std::string kernel;  ///< instance id, or full_dequant_linear
  std::string backend; ///< "host", "cuda", "host (full-dequant fallback)"
  kernels::Phase phase = kernels::Phase::Decode;
  int64_t tokens = 0;
  double seconds = 0;
  bool fallback = false;
  bool warmup = false; ///< a load-time warmup call, not a user's
};

class ExecutionTrace {
public:
  void add(DispatchRecord r) { records.push_back(std::move(r)); }
  const std::vector<DispatchRecord> &all() const { return records; }
  /// Calls that ran the fallback (warmups included).
  size_t fallbacks() const;

  nlohmann::ordered_json toJson() const;
  /// One line per call: "op  phase T=5  kernel  backend  0.123 ms".
  std::string toText() const;

private:
  std::vector<DispatchRecord> records;
};

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_EXECUTIONTRACE_H
