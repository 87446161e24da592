//===- CompilerSupport.h - Helpers the compiler's stages share --*- C++ -*-===//
//
// Internal to lib/Compiler: a scratch directory that removes itself, and a
// capture of the MLIR diagnostics a step emits, returned as one message.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_COMPILERSUPPORT_H
#define QTENSOR_LIB_COMPILER_COMPILERSUPPORT_H

#include "qtensor/Support/ExitCleanup.h"
#include "qtensor/Support/Expected.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <filesystem>
#include <string>

namespace qtensor::compiler {

/// A directory under $TMPDIR (else /tmp) named `<stem>-XXXXXX`, removed
/// with everything in it when this goes, or by the fatal paths
/// (ExitCleanup.h) when the process dies first; `path` is empty when it
/// could not be made.
struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string &stem = "qtc-compile") {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/" + stem + "-XXXXXX";
    onAbnormalExit = ExitCleanup::makeTemporaryDirectory(pattern, path);
  }
  ~ScratchDir() {
    // Removed before the abnormal-exit action is released: a signal in
    // between would find nobody to remove it.
    std::error_code ignored; // a leftover temp folder is not worth failing
    if (!path.empty())
      std::filesystem::remove_all(path, ignored);
    onAbnormalExit.release();
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

private:
  ExitCleanup onAbnormalExit;
};

/// Collects the diagnostics MLIR emits while a step runs, so a failure is
/// returned as one message instead of being printed.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(mlir::MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &d) {
          if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
            return mlir::success();
          llvm::raw_string_ostream os(text);
          os << (text.empty() ? "" : "\n") << d;
          for (const mlir::Diagnostic &note : d.getNotes())
            os << "\n  note: " << note;
          return mlir::success();
        }) {}
  Error error(const std::string &what) const {
    return makeError(what, text.empty() ? "" : ": ", text);
  }

private:
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_COMPILERSUPPORT_H
