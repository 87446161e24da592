//===- Progress.h - Staged progress for long qtc commands --------*- C++ -*-===//
//
// Stages are announced as "[2/6] quantize" lines on stderr; long stages
// report counts with an estimate of the time left ("  14/224 linears,
// ~3 s left") on a line that rewrites itself when stderr is a terminal and
// every 10% otherwise. `--quiet` silences it; `--json` turns it into one JSON
// object per line on stderr ({"stage":..., "done":..., "total":...}) so a
// program reads progress without parsing prose. stdout stays the result's.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TOOLS_QTC_PROGRESS_H
#define QTENSOR_TOOLS_QTC_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <string>

namespace qtensor::qtc {

class Progress {
public:
  enum class Mode { Text, Json, Quiet };
  Progress(Mode mode, int stages);

  /// Starts the next stage.
  void stage(const std::string &name);
  /// Reports `done` of `total` items of the current stage.
  void advance(uint64_t done, uint64_t total, const std::string &unit);
  /// Ends the current stage (prints its duration in text mode).
  void finish(const std::string &summary = "");

private:
  Mode mode;
  int stages, current = 0;
  bool terminal;
  std::string name;
  int lastDecile = -1;
  std::chrono::steady_clock::time_point started;
};

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_PROGRESS_H
