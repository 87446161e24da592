//===- ToolLLVMErrors.h - LLVM's fatal errors as a tool's errors -*- C++ -*-===//
//
// LLVM aborts (with a stack dump) on a failed allocation and on its other
// fatal errors. A tool that links LLVM installs these first thing in main:
// a failed allocation is toolOutOfMemory, any other fatal error one line
// "NAME: error: in LLVM: REASON", both exit status 1 after the exit
// cleanups. Header-only: only the tools that link LLVM include it.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TOOLS_COMMON_TOOLLLVMERRORS_H
#define QTENSOR_TOOLS_COMMON_TOOLLLVMERRORS_H

#include "ToolMemory.h"

#include "qtensor/Support/ExitCleanup.h"

#include "llvm/Support/ErrorHandling.h"

#include <cstring>
#include <unistd.h>

namespace qtensor::tools {

inline void installLLVMErrorHandlers() {
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *, bool) { toolOutOfMemory(); });
  llvm::install_fatal_error_handler([](void *, const char *reason, bool) {
    auto say = [](const char *text) {
      (void)!::write(STDERR_FILENO, text, std::strlen(text));
    };
    say(toolName());
    say(": error: in LLVM: ");
    say(reason);
    say("\n");
    runExitCleanups();
    ::_exit(1);
  });
}

} // namespace qtensor::tools

#endif // QTENSOR_TOOLS_COMMON_TOOLLLVMERRORS_H
