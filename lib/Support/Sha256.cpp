//===- Sha256.cpp - SHA-256 through OpenSSL -------------------------------===//

#include "qtensor/Support/Sha256.h"

#include "qtensor/Support/MappedFile.h"

#include <memory>
#include <openssl/evp.h>

using namespace qtensor;

namespace {
Expected<std::string> digest(const uint8_t *data, size_t size,
                             bool releaseChunks) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                              EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    return makeError("sha256: cannot initialize OpenSSL's SHA-256");
  // EVP_DigestUpdate takes size_t; feed in bounded chunks anyway.
  while (size > 0) {
    // 8 MiB chunks when pages are given back (large enough for OpenSSL's
    // throughput, small against any tensor); 1 GiB otherwise.
    size_t limit = releaseChunks ? (size_t(8) << 20) : (size_t(1) << 30);
    size_t chunk = size < limit ? size : limit;
    if (EVP_DigestUpdate(ctx.get(), data, chunk) != 1)
      return makeError("sha256: digest update failed");
    if (releaseChunks)
      releaseMappedPages(data, chunk);
    data += chunk;
    size -= chunk;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1 || length != 32)
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
} // namespace

Expected<std::string> qtensor::sha256Hex(const uint8_t *data, size_t size) {
  return digest(data, size, /*releaseChunks=*/false);
}

Expected<std::string> qtensor::sha256HexOfMapped(const uint8_t *data,
                                                 size_t size) {
  return digest(data, size, /*releaseChunks=*/true);
}
