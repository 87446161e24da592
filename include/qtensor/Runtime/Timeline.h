//===- Timeline.h - The startup timeline (seed M8.9 0x0AB) ------*- C++ -*-===//
//
// Startup is measured per stage, not as one number: a format that parses
// fast can still be slow to become ready because repacking or kernel
// loading dominates. The stages are the seed's:
//
//   discover  locate the artifact root and its manifest
//   parse     read the bounded metadata (manifest, trace, report, kernels)
//   verify    hashes, schema, inventory, kernel admission (compatibility)
//   read      map the required shards, resolve the tensors' byte ranges
//   transfer  host-to-device copies
//   repack    canonical or stored layout -> the kernel's layout, and
//             full-dequant fallback materialization
//   engine    load kernel code (dlopen of host code, cuModuleLoadData)
//   warmup    one representative call per kernel instance
//
// A stage may be entered several times (per file, per tensor); the timeline
// keeps every interval in order and a total per stage.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_TIMELINE_H
#define QTENSOR_RUNTIME_TIMELINE_H

#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace qtensor::runtime {

enum class Stage : uint8_t {
  Discover,
  Parse,
  Verify,
  Read,
  Transfer,
  Repack,
  Engine,
  Warmup,
};
constexpr size_t kNumStages = 8;
const char *toString(Stage s);

class Timeline {
public:
  struct Interval {
    Stage stage;
    double seconds = 0;
    std::string detail; ///< what was done ("3 files hashed, 12.5 MB")
  };

  /// Appends one interval; negative durations are recorded as 0.
  void record(Stage stage, double seconds, std::string detail = "");
  /// Sum of the stage's intervals.
  double total(Stage stage) const { return totals[size_t(stage)]; }
  /// Sum over every stage: time to ready.
  double total() const;
  const std::vector<Interval> &intervals() const { return entries; }

  /// {"stages": {"discover": s, ...} (every stage, 0 when not entered),
  ///  "total_seconds": s, "intervals": [{"stage", "seconds", "detail"}]}.
  nlohmann::ordered_json toJson() const;
  /// One line per stage with its share of the total.
  std::string toText() const;

private:
  std::vector<Interval> entries;
  std::array<double, kNumStages> totals{};
};

/// Measures the time from construction to stop() (or destruction) and
/// records it into the timeline with the detail set by then.
class ScopedStage {
public:
  ScopedStage(Timeline &timeline, Stage stage)
      : timeline(&timeline), stage(stage),
        start(std::chrono::steady_clock::now()) {}
  ScopedStage(const ScopedStage &) = delete;
  ScopedStage &operator=(const ScopedStage &) = delete;
  ~ScopedStage() { stop(); }

  void setDetail(std::string d) { detail = std::move(d); }
  /// Records the interval now; later calls do nothing.
  void stop();

private:
  Timeline *timeline;
  Stage stage;
  std::chrono::steady_clock::time_point start;
  std::string detail;
  bool stopped = false;
};

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_TIMELINE_H
