//===- Sha256.h - SHA-256 through OpenSSL -----------------------*- C++ -*-===//
#ifndef QTENSOR_SUPPORT_SHA256_H
#define QTENSOR_SUPPORT_SHA256_H

#include "qtensor/Support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace qtensor {

/// SHA-256 over bytes that arrive in pieces (a file hashed while it is
/// read, so that each byte is read once).
class Sha256Stream {
public:
  static Expected<Sha256Stream> create();
  Status update(const uint8_t *data, size_t size);
  /// The digest of everything updated so far, as 64 lowercase hex digits.
  Expected<std::string> finishHex();

private:
  struct Context;
  struct ContextDeleter {
    void operator()(Context *) const;
  };
  std::unique_ptr<Context, ContextDeleter> ctx;
};

/// SHA-256 of `size` bytes as 64 lowercase hex digits (OpenSSL EVP).
Expected<std::string> sha256Hex(const uint8_t *data, size_t size);
/// The same digest over bytes of a read-only file mapping, giving each
/// hashed chunk's pages back (releaseMappedPages): hashing a file of any
/// size keeps at most one chunk of it resident.
Expected<std::string> sha256HexOfMapped(const uint8_t *data, size_t size);

/// SHA-256 of each `chunkBytes`-long piece of a file's bytes (the last may
/// be shorter) and, when `whole`, of all of them: the pieces are hashed on
/// every thread of the default pool at once, the whole digest (one serial
/// chain) on one of them beside the pieces. Pages of a file mapping are
/// given back as they are hashed (sha256HexOfMapped).
struct PieceDigests {
  std::string whole; ///< empty unless asked for
  std::vector<std::string> pieces;
};
Expected<PieceDigests> sha256Pieces(const uint8_t *data, size_t size,
                                    uint64_t chunkBytes, bool whole);

} // namespace qtensor

#endif // QTENSOR_SUPPORT_SHA256_H
