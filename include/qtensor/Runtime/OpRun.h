//===- OpRun.h - Run an artifact's linears op by op and report --*- C++ -*-===//
//
// What `qtc run` does without --prompt, as a library (docs/qtc.md). Each op
// of a loaded rank, or of a tensor-parallel group, gets its activations
// (the `input` safetensors file, else the deterministic generator of
// Runtime/Activations.h), runs, and is summarized: shape, dtype, a SHA-256
// prefix, the sum and the first values. With `check` each output is
// compared with the float64 reference of the reference-dequantized weight,
// against the error bound of Runtime/Reference.h (a group: against the
// whole weight). The result is one report, JSON for programs and text for
// people, with the load's dispatch trace, timeline, ledgers and read
// amplification; the caller prints it.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_OPRUN_H
#define QTENSOR_RUNTIME_OPRUN_H

#include "qtensor/Runtime/Activations.h"
#include "qtensor/Runtime/Loader.h"
#include "qtensor/Runtime/RankExchange.h"
#include "qtensor/Runtime/TensorParallel.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace qtensor::runtime {

struct OpRunOptions {
  std::string artifact; ///< the artifact directory, named in the report
  /// Activations: the tensor named after the op, else "x" (ActivationInput.h);
  /// empty: generated.
  std::string input;
  std::optional<int64_t> tokens; ///< generated rows (default 1)
  uint64_t seed = kDefaultActivationSeed;
  bool check = false;
  /// Writes every op's output, as F32 named after the op, into this
  /// safetensors file (empty: none).
  std::string outputs;
};

struct OpRunReport {
  /// Every op ran, and passed its check.
  bool ok = false;
  /// The stage that failed ("input", "check", "run", "outputs"),
  /// none when every op ran (a failed check is not a failed stage).
  std::optional<std::string> failedStage;
  std::string error;
  /// This process reports for the group (always, but rank 0 under MPI).
  bool speaks = true;
  /// The whole report; {"ok": false, "stage", "error"} after a failure.
  nlohmann::ordered_json json;
  /// The text report (empty after a failure).
  std::string text;
};

/// Runs every op of `model`'s plan.
OpRunReport runOps(LoadedModel &model, const OpRunOptions &options);

/// Runs every op of `group`, joining the ranks' outputs as the collectives
/// would: in this process when `exchange` is null, else one rank per
/// process through `exchange` (a failure in one process fails them all at
/// the next agreement, RankExchange.h).
OpRunReport runGroupOps(TensorParallelGroup &group, RankExchange *exchange,
                        const OpRunOptions &options);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_OPRUN_H
