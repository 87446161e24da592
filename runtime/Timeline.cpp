//===- Timeline.cpp - The startup timeline --------------------------------===//

#include "qtensor/Runtime/Timeline.h"

#include <cstdio>

using namespace qtensor::runtime;

const char *qtensor::runtime::toString(Stage s) {
  switch (s) {
  case Stage::Discover:
    return "discover";
  case Stage::Parse:
    return "parse";
  case Stage::Verify:
    return "verify";
  case Stage::Read:
    return "read";
  case Stage::Transfer:
    return "transfer";
  case Stage::Repack:
    return "repack";
  case Stage::Engine:
    return "engine";
  case Stage::Warmup:
    return "warmup";
  }
  return "?";
}

void Timeline::record(Stage stage, double seconds, std::string detail) {
  if (!(seconds > 0)) // also maps NaN to 0
    seconds = 0;
  totals[size_t(stage)] += seconds;
  entries.push_back({stage, seconds, std::move(detail)});
}

double Timeline::total() const {
  double sum = 0;
  for (double t : totals)
    sum += t;
  return sum;
}

nlohmann::ordered_json Timeline::toJson() const {
  nlohmann::ordered_json stages = nlohmann::ordered_json::object();
  for (size_t i = 0; i < kNumStages; ++i)
    stages[toString(Stage(i))] = totals[i];
  nlohmann::ordered_json intervals = nlohmann::ordered_json::array();
  for (const Interval &e : entries)
    intervals.push_back({{"stage", toString(e.stage)},
                         {"seconds", e.seconds},
                         {"detail", e.detail}});
  nlohmann::ordered_json out;
  out["stages"] = std::move(stages);
  out["total_seconds"] = total();
  out["intervals"] = std::move(intervals);
  return out;
}

std::string Timeline::toText() const {
  std::string out;
  double all = total();
  char line[160];
  for (size_t i = 0; i < kNumStages; ++i) {
    std::string details;
    for (const Interval &e : entries)
      if (size_t(e.stage) == i && !e.detail.empty())
        details += (details.empty() ? "" : "; ") + e.detail;
    std::snprintf(line, sizeof(line), "  %-9s %10.3f ms %5.1f%%",
                  toString(Stage(i)), totals[i] * 1e3,
                  all > 0 ? 100.0 * totals[i] / all : 0.0);
    out += line;
    if (!details.empty())
      out += "  " + details;
    out += "\n";
  }
  std::snprintf(line, sizeof(line), "  %-9s %10.3f ms\n", "ready", all * 1e3);
  out += line;
  return out;
}

void ScopedStage::stop() {
  if (stopped)
    return;
  stopped = true;
  std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
  timeline->record(stage, d.count(), std::move(detail));
}
