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
//   L5 dispatch/resources    the kernels the trace selected are admitted
//                            again by this build's registry, fallbacks are
//                            within policy, no full-dequant copy of a
//                            quantized weight is stored, and the bytes the
//                            runtime would hold equal the report's ledger
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_VERIFY_LADDER_H
#define QTENSOR_VERIFY_LADDER_H

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace qtensor::verify {

struct LevelResult {
  std::string level; ///< "L0", "L1", ...
  std::string name;
  bool ok = false;
  std::string detail;
};

struct LadderResult {
  bool ok = false;
  std::vector<LevelResult> levels;
  nlohmann::ordered_json toJson() const;
};

/// Runs every level on the artifact in `dir`. Levels after a failed L0 are
/// reported as not run (ok = false): nothing above bytes can be trusted.
LadderResult runLadder(const std::string &dir);

} // namespace qtensor::verify

#endif // QTENSOR_VERIFY_LADDER_H
