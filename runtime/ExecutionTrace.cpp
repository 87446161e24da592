//===- ExecutionTrace.cpp - What ran, per op call -------------------------===//

#include "qtensor/Runtime/ExecutionTrace.h"

#include <cstdio>

using namespace qtensor::runtime;

size_t ExecutionTrace::fallbacks() const {
  size_t n = 0;
  for (const DispatchRecord &r : records)
    n += r.fallback;
  return n;
}

nlohmann::ordered_json ExecutionTrace::toJson() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const DispatchRecord &r : records)
    out.push_back({{"op", r.op},
                   {"kernel", r.kernel},
                   {"backend", r.backend},
                   {"phase", kernels::toString(r.phase)},
                   {"T", r.tokens},
                   {"seconds", r.seconds},
                   {"fallback", r.fallback},
                   {"warmup", r.warmup}});
  return out;
}

std::string ExecutionTrace::toText() const {
  std::string out;
  char line[96];
  for (const DispatchRecord &r : records) {
    std::snprintf(line, sizeof(line), " %-7s T=%-5lld %9.3f ms  ",
                  kernels::toString(r.phase), (long long)r.tokens,
                  r.seconds * 1e3);
    out += "  " + r.op + line + r.kernel + " on " + r.backend +
           (r.fallback ? " [FALLBACK]" : "") + (r.warmup ? " (warmup)" : "") +
           "\n";
  }
  return out;
}
