//===- ToolMemory.cpp - Memory limits as a tool's errors ------------------===//

#include "ToolMemory.h"

#include "qtensor/Support/ExitCleanup.h"
#include "qtensor/Support/LargeBuffers.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/resource.h>
#include <unistd.h>

namespace qtensor::tools {
namespace {

const char *name = "qtensor";

/// What the main thread's stack is grown to.
constexpr size_t kReservedStack = size_t(4) << 20;

[[gnu::noinline]] void reserveStack() {
  volatile char pages[kReservedStack];
  for (size_t i = 0; i < sizeof(pages); i += 4096)
    pages[i] = 0;
}

/// Whether the address-space limit leaves room for reserveStack (growing
/// the stack past the limit is a SIGSEGV, not an error). Unknown: yes.
bool stackFits() {
  rlimit limit;
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return true;
  int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return true;
  char text[128] = {};
  ssize_t n = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  unsigned long long pages = 0;
  if (n <= 0 || std::sscanf(text, "%llu", &pages) != 1)
    return true;
  const unsigned long long used = pages * uint64_t(::sysconf(_SC_PAGESIZE));
  // The reservation and a margin for the frames of this call.
  return used + kReservedStack + (256u << 10) <= limit.rlim_cur;
}

void say(const char *text) {
  (void)!::write(STDERR_FILENO, text, std::strlen(text));
}

} // namespace

void setToolName(const char *tool) { name = tool; }
const char *toolName() { return name; }

[[noreturn]] void toolOutOfMemory() {
  say(name);
  say(": error: out of memory: an allocation failed (the process's memory "
      "or address-space limit is too small for this work)\n");
  runExitCleanups();
  ::_exit(1);
}

bool prepareToolMemory() {
  rlimit stack;
  if (::getrlimit(RLIMIT_STACK, &stack) == 0 &&
      stack.rlim_cur != RLIM_INFINITY &&
      stack.rlim_cur < kReservedStack + (1u << 20)) {
    std::fprintf(stderr,
                 "%s: error: the stack limit (ulimit -s) is %llu KiB; %s "
                 "needs at least %zu KiB\n",
                 name, (unsigned long long)(stack.rlim_cur >> 10), name,
                 (kReservedStack + (1u << 20)) >> 10);
    return false;
  }
  if (!stackFits())
    toolOutOfMemory();
  reserveStack();
  std::set_new_handler(toolOutOfMemory);
  keepLargeBuffersForReuse();
  return true;
}

} // namespace qtensor::tools
