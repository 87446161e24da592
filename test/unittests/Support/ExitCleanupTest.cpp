//===- ExitCleanupTest.cpp - What an abnormal exit still undoes -----------===//
//
// Actions are registered in this process, which then forks: the child ends
// the way a fatal path does (runExitCleanups and _exit, or a termination
// signal) and the parent checks the files. Registering before the fork
// keeps the child to async-signal-safe work, as the real fatal paths are.
//
//===----------------------------------------------------------------------===//

#include "TestTempDir.h"

#include "qtensor/Support/ExitCleanup.h"

#include <gtest/gtest.h>

#include <climits>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace qtensor;
namespace fs = std::filesystem;

namespace {

struct Scratch : qtensor::test::TempDir {
  Scratch() : qtensor::test::TempDir("qtensor-exit-cleanup-test") {}
};

void touch(const fs::path &p) { std::ofstream(p) << "x"; }

/// Runs `child` in a forked process; its wait status.
int inChild(const std::function<void()> &child) {
  pid_t pid = ::fork();
  if (pid == 0) {
    child();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

/// A flat scratch directory with two files and an empty subfolder.
fs::path makeScratchLike(const Scratch &dir) {
  fs::path d = dir / "scratch";
  fs::create_directories(d / "empty");
  touch(d / "kernels.o");
  touch(d / "kernels.so");
  return d;
}

} // namespace

TEST(ExitCleanup, AFatalPathRemovesScratchAndWithdrawsTheManifest) {
  Scratch dir;
  fs::path scratch = makeScratchLike(dir);
  touch(dir / "manifest.json");
  ExitCleanup removal = ExitCleanup::removeDirectory(scratch.string());
  ExitCleanup withdrawal =
      ExitCleanup::renameFile((dir / "manifest.json").string(),
                              (dir / "manifest.rejected.json").string());
  ASSERT_TRUE(removal.armed() && withdrawal.armed());
  int status = inChild([] {
    runExitCleanups();
    ::_exit(1);
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_FALSE(fs::exists(scratch));
  EXPECT_FALSE(fs::exists(dir / "manifest.json"));
  EXPECT_TRUE(fs::exists(dir / "manifest.rejected.json"));
}

TEST(ExitCleanup, ReleasedActionsDoNotRun) {
  Scratch dir;
  fs::path scratch = makeScratchLike(dir);
  {
    ExitCleanup removal = ExitCleanup::removeDirectory(scratch.string());
  }
  ExitCleanup moved =
      ExitCleanup::renameFile((dir / "a").string(), (dir / "b").string());
  touch(dir / "a");
  moved.release();
  EXPECT_FALSE(moved.armed());
  inChild([] { runExitCleanups(); });
  EXPECT_TRUE(fs::exists(scratch / "kernels.so"));
  EXPECT_TRUE(fs::exists(dir / "a"));
}

TEST(ExitCleanup, TheNewestActionRunsFirst) {
  Scratch dir;
  touch(dir / "a");
  // Oldest first would move a to b and then b to c; newest first finds no
  // b yet, then moves a to b.
  ExitCleanup first =
      ExitCleanup::renameFile((dir / "a").string(), (dir / "b").string());
  ExitCleanup second =
      ExitCleanup::renameFile((dir / "b").string(), (dir / "c").string());
  inChild([] { runExitCleanups(); });
  EXPECT_TRUE(fs::exists(dir / "b"));
  EXPECT_FALSE(fs::exists(dir / "c"));
}

TEST(ExitCleanup, ATerminationSignalCleansUpAndStillKills) {
  Scratch dir;
  fs::path scratch = makeScratchLike(dir);
  ExitCleanup removal = ExitCleanup::removeDirectory(scratch.string());
  int status = inChild([] {
    installTerminationCleanup();
    ::raise(SIGTERM);
    ::_exit(0); // not reached: the signal ends the process
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_FALSE(fs::exists(scratch));
}

TEST(ExitCleanup, AnIgnoredSignalStaysIgnored) {
  Scratch dir;
  fs::path scratch = makeScratchLike(dir);
  ExitCleanup removal = ExitCleanup::removeDirectory(scratch.string());
  int status = inChild([] {
    ::signal(SIGINT, SIG_IGN); // as nohup or a background shell job
    installTerminationCleanup();
    ::raise(SIGINT);
    ::_exit(7);
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_TRUE(fs::exists(scratch / "kernels.o"));
}

TEST(ExitCleanup, ASecondFatalPathWaitsForTheFirst) {
  // Two threads meet fatal paths at once (both out of memory): the one
  // that finds the cleanup running must not end the process under it.
  Scratch dir;
  fs::path scratch = dir / "many";
  fs::create_directories(scratch);
  for (int i = 0; i < 3000; ++i)
    touch(scratch / ("f" + std::to_string(i)));
  ExitCleanup removal = ExitCleanup::removeDirectory(scratch.string());
  int status = inChild([] {
    std::thread other([] {
      runExitCleanups();
      ::_exit(3);
    });
    runExitCleanups();
    ::_exit(3);
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_FALSE(fs::exists(scratch));
}

TEST(ExitCleanup, APathTooLongIsNotArmed) {
  std::string longPath(PATH_MAX + 10, 'a');
  EXPECT_FALSE(ExitCleanup::removeDirectory(longPath).armed());
  EXPECT_FALSE(ExitCleanup::renameFile("/tmp/x", longPath).armed());
}

TEST(ExitCleanup, FilesAddedDuringTheRemovalAreRemovedToo) {
  // A linker the compile started is its own process and may still write
  // into the scratch directory while a fatal path removes it.
  Scratch dir;
  fs::path scratch = makeScratchLike(dir);
  ExitCleanup removal = ExitCleanup::removeDirectory(scratch.string());
  pid_t writer = ::fork();
  if (writer == 0) {
    for (int i = 0; i < 1000; ++i) {
      std::ofstream(scratch / ("late" + std::to_string(i))) << "x";
      ::usleep(100);
    }
    ::_exit(0);
  }
  ::usleep(2000); // the writer is under way
  int status = inChild([] {
    runExitCleanups();
    ::_exit(0);
  });
  ::waitpid(writer, nullptr, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_FALSE(fs::exists(scratch));
}

TEST(ExitCleanup, AFatalPathKillsAToolStillRunning) {
  pid_t tool = ::fork();
  if (tool == 0) {
    ::pause();
    ::_exit(0);
  }
  ExitCleanup kill = ExitCleanup::killProcess(tool);
  ASSERT_TRUE(kill.armed());
  inChild([] { runExitCleanups(); });
  int status = 0;
  ASSERT_EQ(::waitpid(tool, &status, 0), tool);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_FALSE(ExitCleanup::killProcess(0).armed()); // never the group
}

TEST(ExitCleanup, ATemporaryDirectoryIsMadeAndRegistered) {
  Scratch dir;
  std::string path;
  ExitCleanup removal = ExitCleanup::makeTemporaryDirectory(
      (dir / "qtc-compile-XXXXXX").string(), path);
  ASSERT_TRUE(removal.armed());
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(fs::path(path).parent_path(), fs::path(dir.path()));
  EXPECT_TRUE(fs::is_directory(path));
  touch(fs::path(path) / "kernels.o");
  inChild([] { runExitCleanups(); });
  EXPECT_FALSE(fs::exists(path));

  std::string none = "unchanged";
  EXPECT_FALSE(ExitCleanup::makeTemporaryDirectory(
                   (dir / "missing" / "x-XXXXXX").string(), none)
                   .armed());
  EXPECT_TRUE(none.empty());
}
