//===- MemoryLedger.h - Disk, mapped, host and device ledgers ---*- C++ -*-===//
//
// Seed M8.9 0x0AA: disk, page cache, host and HBM are different ledgers. A
// memory-mappable file avoids one host copy but still needs a transfer and
// possibly a repack; a full-dequant fallback invalidates low-bit residency
// claims. Each category is its own ledger, so the same bytes may appear in
// two of them (a mapped shard whose codes the host kernels read in place is
// `mapped`, not `resident_host`; the same codes copied to the GPU are also
// `device_codes`). Categories are never summed into one number.
//
//   disk          bytes of every file the manifest lists
//   mapped        bytes of the files the loader holds, read into private
//                 memory or mapped (LoadOptions::access; whole files: their
//                 SHA-256 covers the whole file)
//   resident_host heap bytes the runtime holds after load (aligned copies,
//                 load-time repacks, converted qparams, kernel code copies)
//   device_codes  packed codes the kernels read, where they execute
//                 (device memory for CUDA; in-place views count 0 here)
//   qparams       scales, zero-points and biases where the kernels read
//                 them (same rule as device_codes)
//   workspace     per-call buffers (staged activations, outputs); peak
//   fallback      full-dequant weight buffers (seed 0x08D); never silent
//
// Every item is named (file, tensor or buffer), so a test or a user can see
// where a number comes from. Sums are overflow-checked.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_MEMORYLEDGER_H
#define QTENSOR_RUNTIME_MEMORYLEDGER_H

#include "qtensor/Support/Expected.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace qtensor::runtime {

enum class MemoryCategory : uint8_t {
  Disk,
  Mapped,
  ResidentHost,
  DeviceCodes,
  QParams,
  Workspace,
  Fallback,
};
constexpr size_t kNumMemoryCategories = 7;
const char *toString(MemoryCategory c);

class MemoryLedger {
public:
  /// Adds `bytes` held by `item` in `category` (an existing item grows).
  Status add(MemoryCategory category, const std::string &item, uint64_t bytes);
  /// Releases everything `item` holds in `category`; the peak stays.
  Status release(MemoryCategory category, const std::string &item);
  /// Gives back `bytes` of `item` (what one add put there, when several
  /// holders share the item's name); the item goes at zero.
  Status release(MemoryCategory category, const std::string &item,
                 uint64_t bytes);

  uint64_t current(MemoryCategory c) const { return now[size_t(c)]; }
  uint64_t peak(MemoryCategory c) const { return high[size_t(c)]; }
  /// Bytes `item` holds now in `c` (0 when absent).
  uint64_t held(MemoryCategory c, const std::string &item) const;
  /// The items currently held in `c`.
  const std::map<std::string, uint64_t> &items(MemoryCategory c) const {
    return held_[size_t(c)];
  }

  /// {"disk": {"bytes", "peak_bytes", "items"}, ...} for every category;
  /// `withItems` adds the per-item breakdown.
  nlohmann::ordered_json toJson(bool withItems = false) const;
  std::string toText() const;

private:
  std::array<uint64_t, kNumMemoryCategories> now{}, high{};
  std::array<std::map<std::string, uint64_t>, kNumMemoryCategories> held_;
};

/// "12.5 MiB" for a byte count.
std::string formatBytes(uint64_t bytes);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_MEMORYLEDGER_H
