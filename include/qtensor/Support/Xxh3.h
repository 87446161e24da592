//===- Xxh3.h - XXH3-128 checksums through libxxhash ------------*- C++ -*-===//
//
// A fast non-cryptographic checksum (tens of GB/s on one core) for checks
// of equality between two computations the project runs itself, where the
// compared record is already covered by a SHA-256 (the reconstruction
// digests of parity level L2: the report that holds them is hashed in the
// manifest). Bytes an attacker could choose are hashed with SHA-256
// (Sha256.h), never with this.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_XXH3_H
#define QTENSOR_SUPPORT_XXH3_H

#include "qtensor/Support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace qtensor {

/// XXH3-128 (seed 0) over bytes that arrive in pieces.
class Xxh3Stream {
public:
  static Expected<Xxh3Stream> create();
  Status update(const uint8_t *data, size_t size);
  /// The checksum of everything updated so far: 32 lowercase hex digits,
  /// the high 64 bits first (XXH128_canonical_t's order).
  std::string finishHex() const;

private:
  struct State;
  struct StateDeleter {
    void operator()(State *) const;
  };
  std::unique_ptr<State, StateDeleter> state;
};

} // namespace qtensor

#endif // QTENSOR_SUPPORT_XXH3_H
