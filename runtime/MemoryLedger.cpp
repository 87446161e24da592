//===- MemoryLedger.cpp - Disk, mapped, host and device ledgers -----------===//

#include "qtensor/Runtime/MemoryLedger.h"

#include "qtensor/Support/CheckedMath.h"

#include <cstdio>

using namespace qtensor;
using namespace qtensor::runtime;

const char *qtensor::runtime::toString(MemoryCategory c) {
  switch (c) {
  case MemoryCategory::Disk:
    return "disk";
  case MemoryCategory::Mapped:
    return "mapped";
  case MemoryCategory::ResidentHost:
    return "resident_host";
  case MemoryCategory::DeviceCodes:
    return "device_codes";
  case MemoryCategory::QParams:
    return "qparams";
  case MemoryCategory::Workspace:
    return "workspace";
  case MemoryCategory::Fallback:
    return "fallback";
  }
  return "?";
}

Status MemoryLedger::add(MemoryCategory category, const std::string &item,
                         uint64_t bytes) {
  size_t c = size_t(category);
  uint64_t &mine = held_[c][item];
  auto grown = checkedAdd(mine, bytes);
  auto total = checkedAdd(now[c], bytes);
  if (!grown || !total)
    return makeError("memory ledger ", toString(category), ": adding ", bytes,
                     " bytes for ", item, " overflows 64 bits");
  mine = *grown;
  now[c] = *total;
  if (now[c] > high[c])
    high[c] = now[c];
  return Status::ok();
}

Status MemoryLedger::release(MemoryCategory category, const std::string &item) {
  size_t c = size_t(category);
  auto it = held_[c].find(item);
  if (it == held_[c].end())
    return makeError("memory ledger ", toString(category), ": ", item,
                     " holds nothing to release");
  // Cannot underflow: now[c] is the sum of the items.
  now[c] -= it->second;
  held_[c].erase(it);
  return Status::ok();
}

Status MemoryLedger::release(MemoryCategory category, const std::string &item,
                             uint64_t bytes) {
  size_t c = size_t(category);
  auto it = held_[c].find(item);
  if (it == held_[c].end() || it->second < bytes)
    return makeError("memory ledger ", toString(category), ": ", item,
                     " holds ", it == held_[c].end() ? 0 : it->second,
                     " bytes, fewer than the ", bytes, " to release");
  it->second -= bytes;
  now[c] -= bytes;
  if (it->second == 0)
    held_[c].erase(it);
  return Status::ok();
}

uint64_t MemoryLedger::held(MemoryCategory c, const std::string &item) const {
  auto it = held_[size_t(c)].find(item);
  return it == held_[size_t(c)].end() ? 0 : it->second;
}

nlohmann::ordered_json MemoryLedger::toJson(bool withItems) const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (size_t c = 0; c < kNumMemoryCategories; ++c) {
    nlohmann::ordered_json e;
    e["bytes"] = now[c];
    e["peak_bytes"] = high[c];
    e["items"] = held_[c].size();
    if (withItems) {
      nlohmann::ordered_json items = nlohmann::ordered_json::object();
      for (const auto &[name, bytes] : held_[c])
        items[name] = bytes;
      e["by_item"] = std::move(items);
    }
    out[toString(MemoryCategory(c))] = std::move(e);
  }
  return out;
}

std::string MemoryLedger::toText() const {
  std::string out;
  char line[160];
  for (size_t c = 0; c < kNumMemoryCategories; ++c) {
    std::snprintf(line, sizeof(line), "  %-13s %12s (peak %s, %zu items)\n",
                  toString(MemoryCategory(c)), formatBytes(now[c]).c_str(),
                  formatBytes(high[c]).c_str(), held_[c].size());
    out += line;
  }
  return out;
}

std::string qtensor::runtime::formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof(buf), "%llu B", (unsigned long long)bytes);
  else
    std::snprintf(buf, sizeof(buf), "%.2f %s", v, units[u]);
  return buf;
}
