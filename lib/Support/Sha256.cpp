//===- Sha256.cpp - SHA-256 through OpenSSL -------------------------------===//

#include "qtensor/Support/Sha256.h"

#include "qtensor/Support/MappedFile.h"

#include <memory>
#include <openssl/evp.h>

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
