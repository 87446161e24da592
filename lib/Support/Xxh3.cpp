//===- Xxh3.cpp - XXH3-128 checksums through libxxhash --------------------===//

#include "qtensor/Support/Xxh3.h"

// The library's functions inlined from its header: nothing to link, and
// nothing for an embedder of the installed libraries to find.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace qtensor {

struct Xxh3Stream::State {
  XXH3_state_t *xxh = nullptr;
};

void Xxh3Stream::StateDeleter::operator()(State *s) const {
  if (s && s->xxh)
    XXH3_freeState(s->xxh);
  delete s;
}

Expected<Xxh3Stream> Xxh3Stream::create() {
  Xxh3Stream x;
  x.state.reset(new State);
  x.state->xxh = XXH3_createState();
  if (!x.state->xxh || XXH3_128bits_reset(x.state->xxh) != XXH_OK)
    return makeError("xxh3: cannot create a checksum state");
  return x;
}

Status Xxh3Stream::update(const uint8_t *data, size_t size) {
  if (XXH3_128bits_update(state->xxh, data, size) != XXH_OK)
    return makeError("xxh3: update of ", size, " bytes failed");
  return Status::ok();
}

std::string Xxh3Stream::finishHex() const {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state->xxh));
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * sizeof(canonical.digest));
  for (unsigned char byte : canonical.digest) {
    out += hex[byte >> 4];
    out += hex[byte & 15];
  }
  return out;
}

} // namespace qtensor
