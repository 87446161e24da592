//===- SourceDigest.cpp - The checkpoint's digest, hashed beside the rest -===//

#include "SourceDigest.h"

#include "CheckpointDetail.h"

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

namespace qtensor::compiler {

struct SourceDigest::State {
  std::atomic<bool> cancel{false};
  std::thread thread;
  std::once_flag joined;
  std::optional<Expected<std::string>> result; ///< set by the thread

  ~State() {
    cancel = true;
    join();
  }
  void join() {
    std::call_once(joined, [this] {
      if (thread.joinable())
        thread.join();
    });
  }
};

SourceDigest SourceDigest::start(std::vector<std::string> paths) {
  SourceDigest d;
  d.state = std::make_shared<State>();
  State *s = d.state.get();
  try {
    // The thread has its own copy of the names: if it cannot start,
    // `paths` is still whole for the fallback.
    s->thread = std::thread([s, own = paths] {
      s->result.emplace(detail::digestFiles(own, &s->cancel));
    });
  } catch (const std::exception &) {
    // No thread to be had (a process or memory limit): the same digest,
    // now, on the caller's thread.
    s->result.emplace(detail::digestFiles(paths, nullptr));
  }
  return d;
}

Expected<std::string> SourceDigest::get() const {
  if (!state)
    return makeError("the checkpoint's digest was never computed");
  state->join(); // the thread's writes happen-before the join's return
  if (!state->result)
    return makeError("the checkpoint's digest was not computed");
  return *state->result;
}

} // namespace qtensor::compiler
