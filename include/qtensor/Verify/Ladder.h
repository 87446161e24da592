//===- Ladder.h - The parity ladder of an artifact --------------*- C++ -*-===//
//
// Seed M8.9 0x09: each level proves one more thing about a reopened artifact,
// and a failure names the level, the file and the tensor.
//
//   L0 bytes and inventory   every file's size and SHA-256, every shard's
//                            tensors exactly as the manifest declares
//   L1 pack/unpack           stored codes unpack (padding zero, codes in
//                            range) and repack to the same bytes
//   L2 reference             the reference reconstruction of what is stored
//                            has the digest the compiler recorded
//   L3 operator parity       each linear's host kernel against a float64
//                            matmul of the reference weight
//   L4 model parity          the decoder program's logits against its
//                            float64 forward, greedy tokens, the KV cache
//                            (not run when the artifact has no program)
//   L5 dispatch/resources    the kernels the trace selected are admitted
//                            again by this build's registry, fallbacks are
//                            within policy, no full-dequant copy of a
//                            quantized weight is stored, and the bytes the
//                            runtime would hold equal the report's ledger
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_VERIFY_LADDER_H
#define QTENSOR_VERIFY_LADDER_H

#include "qtensor/Runtime/ArtifactCode.h"
#include "qtensor/Runtime/ReferenceDecoder.h"
#include "qtensor/Support/Progress.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace qtensor::verify {

struct LevelResult {
  std::string level; ///< "L0", "L1", ...
  std::string name;
  bool ok = false;
  std::string detail;
  double seconds = 0; ///< how long the level took
  /// Numbers a program reads (`--json`, the report), e.g. L4's
  /// `quantization_error`; null when the level has none.
  nlohmann::ordered_json metrics = nlohmann::ordered_json();
  /// "L3 operator parity (host): ok - <detail>", as qtc prints a level.
  std::string toText() const;
};

struct LadderResult {
  bool ok = false;
  std::vector<LevelResult> levels;
  nlohmann::ordered_json toJson() const;
};

/// How much work L3 does. Every op always runs every kernel entry point
/// that serves it; an op with at least `sampleAboveWeights` weights runs
/// each entry point once, at its smallest T, instead of at T in
/// {1, 5, 16} (decode) and {17, 64} (prefill) as well: the float64
/// reference of each call (and a GPU artifact's host twins, which emulate
/// the GPU per lane) costs seconds at 7B layer sizes. The detail says how
/// many ops were sampled. `exhaustive` runs every T on every op.
/// L4 runs the whole model against a float64 forward: a model of more than
/// `modelAboveWeights` weights in all (every tensor of the artifact), or a
/// GPU artifact, whose host run replays the GPU per lane, with more than
/// `twinModelAboveWeights` quantized weights, reports L4 as not run, with
/// the reason, unless `exhaustive`.
struct LadderOptions {
  bool exhaustive = false;
  /// L3 and L4 run host kernels from this source: a trusted rebuild of
  /// the artifact's records, or its own code only when trusted (ArtifactCode.h;
  /// L0-L2 never load code).
  runtime::ArtifactCodePolicy code = runtime::defaultArtifactCodePolicy();
  int64_t sampleAboveWeights = int64_t(1) << 22;    ///< 4 Mi weights
  int64_t modelAboveWeights = int64_t(1) << 29;     ///< 512 Mi weights
  int64_t twinModelAboveWeights = int64_t(1) << 26; ///< 64 Mi weights
  /// The float weights the quantized linears were made from, by tensor
  /// name (the compiler's checkpoint; none for a linear that kept stored
  /// codes). With them L4 also measures the quantization error at model
  /// level: the float64 forward of these weights against the one of the
  /// reconstructed weights. An artifact alone cannot: `qtc verify` shows
  /// what the compile recorded.
  runtime::ReferenceWeights sourceWeights;
  /// When set, advanced after each level (`done` of 6), the unit naming
  /// the level just finished and its verdict: the ladder takes seconds to
  /// minutes at real size.
  ProgressSink *progress = nullptr;
};

/// Runs every level on the artifact in `dir`. Levels after a failed L0 are
/// reported as not run (ok = false): nothing above bytes can be trusted.
LadderResult runLadder(const std::string &dir,
                       const LadderOptions &options = {});

} // namespace qtensor::verify

#endif // QTENSOR_VERIFY_LADDER_H
