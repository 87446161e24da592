//===- Progress.h - Staged progress for long qtc commands -------*- C++ -*-===//
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

#include "qtensor/Support/Progress.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace qtensor::qtc {

/// The ProgressSink qtc hands the libraries.
class Progress final : public ProgressSink {
public:
  enum class Mode { Text, Json, Quiet };
  explicit Progress(Mode mode);

  void stage(const std::string &key, const std::string &title, int index,
             int stages) override;
  void advance(uint64_t done, uint64_t total, const std::string &unit) override;
  /// Ends the current stage (prints its duration in text mode).
  void finish(const std::string &summary) override;
  /// The key of the stage that started last ("" before any).
  const std::string &currentStage() const { return key; }

private:
  Mode mode;
  bool terminal;
  std::string key, name;
  int lastDecile = -1;
  std::chrono::steady_clock::time_point started;
};

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_PROGRESS_H
