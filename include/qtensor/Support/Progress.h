//===- Progress.h - Progress of long library work ---------------*- C++ -*-===//
//
// The compiler and the parity ladder run for minutes on real models; they
// report stages and counts through a ProgressSink the caller supplies, so a
// library call never prints. `qtc` turns the events into text or JSON lines;
// an embedder may forward them anywhere, or pass NullProgress.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_PROGRESS_H
#define QTENSOR_SUPPORT_PROGRESS_H

#include <cstdint>
#include <string>

namespace qtensor {

class ProgressSink {
public:
  virtual ~ProgressSink() = default;
  /// Stage `index` of `stages` (1-based) starts. `key` is a short stable
  /// identifier ("read", "quantize", ...) a program can match; `title` is
  /// for a person.
  virtual void stage(const std::string &key, const std::string &title,
                     int index, int stages) = 0;
  /// `done` of `total` items of the current stage are finished.
  virtual void advance(uint64_t done, uint64_t total,
                       const std::string &unit) = 0;
  /// The current stage ended; `summary` says what it produced.
  virtual void finish(const std::string &summary) = 0;
};

/// Discards every event.
class NullProgress final : public ProgressSink {
public:
  void stage(const std::string &, const std::string &, int, int) override {}
  void advance(uint64_t, uint64_t, const std::string &) override {}
  void finish(const std::string &) override {}
};

} // namespace qtensor

#endif // QTENSOR_SUPPORT_PROGRESS_H
