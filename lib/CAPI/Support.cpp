//===- Support.cpp - Strings of the C API ---------------------------------===//

#include "CAPISupport.h"

#include "qtensor-c/Support.h"

#include <cstdlib>
#include <cstring>

char *qtensor::capi::copyString(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (out)
    std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

void qtensor::capi::setError(char **error, const std::string &message) {
  if (error)
    *error = copyString(message);
}

void qtensor::capi::installBuilders() {
  static std::once_flag once;
  std::call_once(once, [] {
    compiler::installTrustedCodeBuilders(runtime::defaultArtifactCodePolicy());
  });
}

extern "C" void qtensorFree(void *pointer) { std::free(pointer); }

extern "C" const char *qtensorVersion(void) { return QTENSOR_VERSION_STRING; }
