//===- Sha256.cpp - SHA-256 through OpenSSL -------------------------------===//

#include "qtensor/Support/Sha256.h"

#include "qtensor/Support/MappedFile.h"
#include "qtensor/Support/ThreadPool.h"

#include <algorithm>
#include <memory>
#include <openssl/evp.h>
#include <optional>

using namespace qtensor;

struct Sha256Stream::Context {
  EVP_MD_CTX *evp;
};

void Sha256Stream::ContextDeleter::operator()(Context *c) const {
  EVP_MD_CTX_free(c->evp);
  delete c;
}

Expected<Sha256Stream> Sha256Stream::create() {
  Sha256Stream s;
  EVP_MD_CTX *evp = EVP_MD_CTX_new();
  if (!evp)
    return makeError("sha256: cannot initialize OpenSSL's SHA-256");
  s.ctx.reset(new Context{evp});
  if (EVP_DigestInit_ex(evp, EVP_sha256(), nullptr) != 1)
    return makeError("sha256: cannot initialize OpenSSL's SHA-256");
  return s;
}

Status Sha256Stream::update(const uint8_t *data, size_t size) {
  // EVP_DigestUpdate takes size_t; feed in bounded chunks anyway.
  while (size > 0) {
    size_t chunk = size < (size_t(1) << 30) ? size : (size_t(1) << 30);
    if (EVP_DigestUpdate(ctx->evp, data, chunk) != 1)
      return makeError("sha256: digest update failed");
    data += chunk;
    size -= chunk;
  }
  return Status::ok();
}

Expected<std::string> Sha256Stream::finishHex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx->evp, digest, &length) != 1 || length != 32)
    return makeError("sha256: digest finalization failed");
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (unsigned i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

namespace {
Expected<std::string> digest(const uint8_t *data, size_t size,
                             bool releaseChunks) {
  QTENSOR_ASSIGN_OR_RETURN(Sha256Stream stream, Sha256Stream::create());
  while (size > 0) {
    // 8 MiB chunks when pages are given back (large enough for OpenSSL's
    // throughput, small against any tensor); 1 GiB otherwise.
    size_t limit = releaseChunks ? (size_t(8) << 20) : (size_t(1) << 30);
    size_t chunk = size < limit ? size : limit;
    QTENSOR_TRY(stream.update(data, chunk));
    if (releaseChunks)
      releaseMappedPages(data, chunk);
    data += chunk;
    size -= chunk;
  }
  return stream.finishHex();
}
} // namespace

Expected<std::string> qtensor::sha256Hex(const uint8_t *data, size_t size) {
  return digest(data, size, /*releaseChunks=*/false);
}

Expected<std::string> qtensor::sha256HexOfMapped(const uint8_t *data,
                                                 size_t size) {
  return digest(data, size, /*releaseChunks=*/true);
}

Expected<PieceDigests> qtensor::sha256Pieces(const uint8_t *data, size_t size,
                                             uint64_t chunkBytes, bool whole) {
  if (chunkBytes == 0)
    return makeError("sha256: a piece size of 0 bytes");
  size_t pieces = size_t(size / chunkBytes + (size % chunkBytes != 0));
  // Task 0 is the whole digest when asked for: the longest task starts
  // first. Each task writes its own slot; the pool's bodies must not throw.
  size_t first = whole ? 1 : 0;
  std::vector<std::optional<Expected<std::string>>> digests(first + pieces);
  defaultThreadPool().parallelFor(digests.size(), [&](size_t task) {
    try {
      if (task < first) {
        digests[task].emplace(sha256HexOfMapped(data, size));
        return;
      }
      uint64_t begin = uint64_t(task - first) * chunkBytes;
      uint64_t n = std::min<uint64_t>(chunkBytes, size - begin);
      digests[task].emplace(sha256HexOfMapped(data + begin, size_t(n)));
    } catch (const std::exception &e) {
      digests[task].emplace(makeError("sha256: ", e.what()));
    }
  });
  PieceDigests out;
  out.pieces.reserve(pieces);
  for (size_t task = 0; task < digests.size(); ++task) {
    Expected<std::string> &d = *digests[task];
    if (!d)
      return d.error();
    if (task < first)
      out.whole = d.take();
    else
      out.pieces.push_back(d.take());
  }
  return out;
}
