//===- ToolMemory.h - Memory limits as a tool's errors ----------*- C++ -*-===//
//
// What qtc and qopt share so that a memory or stack limit ends them with
// one line and exit status 1 instead of a crash: the out-of-memory exit
// that FailedMalloc.cpp, std::set_new_handler and LLVM's handlers call,
// and the main thread's stack grown while memory is there.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TOOLS_COMMON_TOOLMEMORY_H
#define QTENSOR_TOOLS_COMMON_TOOLMEMORY_H

namespace qtensor::tools {

/// The name the messages start with ("qtc", "qopt"); set first in main.
void setToolName(const char *name);
const char *toolName();

/// "NAME: error: out of memory: ..." on stderr, the exit cleanups
/// (ExitCleanup.h), exit status 1. Async-signal-safe; any thread.
[[noreturn]] void toolOutOfMemory();

/// In main, before any real work: refuses (message, false) a stack limit
/// (ulimit -s) below what the tool needs, ends with toolOutOfMemory when
/// the address-space limit leaves no room for the stack, grows the stack
/// (under RLIMIT_AS a stack that must grow later, deep inside LLVM, faults
/// instead of failing an allocation), makes operator new's failure
/// toolOutOfMemory and keeps large buffers for reuse (LargeBuffers.h).
bool prepareToolMemory();

} // namespace qtensor::tools

#endif // QTENSOR_TOOLS_COMMON_TOOLMEMORY_H
