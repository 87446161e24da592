//===- ExitCleanup.h - What an abnormal exit still undoes --------*- C++ -*-===//
//
// A process that ends abnormally (out of memory, a fatal LLVM error, a
// SIGBUS on a mapped file, SIGINT/SIGTERM/SIGHUP) skips every destructor.
// Two things must still happen: a compile whose artifact is published but
// not yet verified withdraws its manifest (so an unverified artifact is
// never left loadable behind an error), and scratch directories are
// removed, and a tool the process started is not left running. Code
// registers such an action for as long as it is needed; the fatal paths
// call runExitCleanups(), which only uses async-signal-safe system calls
// (rename, open, getdents64, unlinkat, rmdir, kill, nanosleep).
//
// SIGKILL cannot be caught: what it leaves is covered by the artifact
// writer's transaction (docs/artifact.md), not by this.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_EXITCLEANUP_H
#define QTENSOR_SUPPORT_EXITCLEANUP_H

#include <string>

namespace qtensor {

/// One registered action; unregistered when destroyed or released. An
/// action whose paths do not fit (PATH_MAX) or that finds every slot taken
/// is not registered: armed() says so.
class ExitCleanup {
public:
  /// Removes the files in `dir` (one level: scratch directories are flat)
  /// and then `dir`. Files that another process (a linker the compile
  /// started) adds meanwhile are removed too: it repeats, for about two
  /// seconds at most, until the directory itself is gone.
  static ExitCleanup removeDirectory(const std::string &dir);
  /// Makes a directory from a mkdtemp(3) `pattern`, sets `path` to it
  /// (empty when it could not be made) and registers its removal, with the
  /// termination signals held off in between: no signal finds it made but
  /// not registered.
  static ExitCleanup makeTemporaryDirectory(const std::string &pattern,
                                            std::string &path);
  /// Sends SIGKILL to the child process `pid`.
  static ExitCleanup killProcess(long pid);
  /// Renames `from` to `to` (replacing `to`).
  static ExitCleanup renameFile(const std::string &from, const std::string &to);

  ExitCleanup() = default;
  ExitCleanup(ExitCleanup &&other) noexcept;
  ExitCleanup &operator=(ExitCleanup &&other) noexcept;
  ExitCleanup(const ExitCleanup &) = delete;
  ExitCleanup &operator=(const ExitCleanup &) = delete;
  ~ExitCleanup() { release(); }

  bool armed() const { return slot >= 0; }
  /// The action is no longer needed (the normal path did or undid it).
  void release();

private:
  explicit ExitCleanup(int slot) : slot(slot) {}
  int slot = -1;
};

/// Runs every armed action, newest first, once. Async-signal-safe.
void runExitCleanups() noexcept;

/// SIGINT, SIGTERM and SIGHUP run the cleanups and then end the process
/// by the same signal (its default action), so the parent still sees it.
void installTerminationCleanup();

} // namespace qtensor

#endif // QTENSOR_SUPPORT_EXITCLEANUP_H
