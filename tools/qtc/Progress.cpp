//===- Progress.cpp - Staged progress for long qtc commands ---------------===//

#include "Progress.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <unistd.h>

namespace qtensor::qtc {

Progress::Progress(Mode mode)
    : mode(mode), terminal(::isatty(STDERR_FILENO) == 1) {}

void Progress::stage(const std::string &stageKey, const std::string &title,
                     int current, int stages) {
  key = stageKey;
  name = title;
  lastDecile = -1;
  started = std::chrono::steady_clock::now();
  if (mode == Mode::Text)
    std::fprintf(stderr, "[%d/%d] %s\n", current, stages, name.c_str());
  else if (mode == Mode::Json)
    std::fprintf(stderr, "%s\n",
                 nlohmann::json{{"stage", name},
                                {"key", key},
                                {"index", current},
                                {"stages", stages},
                                {"event", "start"}}
                     .dump()
                     .c_str());
}

void Progress::advance(uint64_t done, uint64_t total, const std::string &unit) {
  if (mode == Mode::Quiet || total == 0)
    return;
  int decile = static_cast<int>(done * 10 / total);
  if (!terminal && decile == lastDecile && done != total)
    return;
  lastDecile = decile;
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  double left = done ? elapsed * double(total - done) / double(done) : 0.0;
  if (mode == Mode::Json) {
    std::fprintf(stderr, "%s\n",
                 nlohmann::json{{"stage", name},
                                {"event", "progress"},
                                {"done", done},
                                {"total", total},
                                {"unit", unit},
                                {"seconds_left", left}}
                     .dump()
                     .c_str());
    return;
  }
  std::fprintf(stderr, "%s  %llu/%llu %s, ~%.0f s left%s", terminal ? "\r" : "",
               static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total), unit.c_str(), left,
               terminal ? "\033[K" : "\n");
  if (terminal && done == total)
    std::fprintf(stderr, "\n");
}

void Progress::finish(const std::string &summary) {
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  if (mode == Mode::Text)
    std::fprintf(stderr, "      %s%s(%.2f s)\n", summary.c_str(),
                 summary.empty() ? "" : " ", elapsed);
  else if (mode == Mode::Json)
    std::fprintf(stderr, "%s\n",
                 nlohmann::json{{"stage", name},
                                {"event", "end"},
                                {"summary", summary},
                                {"seconds", elapsed}}
                     .dump()
                     .c_str());
}

} // namespace qtensor::qtc
