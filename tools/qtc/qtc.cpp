//===- qtc.cpp - The qtensor ahead-of-time driver -------------------------===//
//
// `qtc COMMAND ...`. Commands are dispatched here and live in a file each;
// the work is done by the libraries they call.
//
//===----------------------------------------------------------------------===//

#include "ExportGGUF.h"
#include "Inspect.h"
#include "Kernels.h"
#include "Run.h"
#include "Tokenize.h"
#include "ToolMemory.h"
#include "VerifyCommand.h"
#include "qtensor/Support/ExitCleanup.h"
#include "qtensor/Support/MappedFile.h"
#include "qtensor/Support/ThreadPool.h"

#ifdef QTENSOR_QTC_COMPILER
#include "ToolLLVMErrors.h"
#include "qtensor/Compiler/TrustedCode.h"
#endif
#if QTENSOR_QTC_COMPILER
#include "CompileCommand.h"
#endif

#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {
const char *kUsage =
    "usage: qtc COMMAND [ARGS]\n"
    "commands:\n"
    "  inspect PATH [--json] [--tensor NAME --dump-f32 OUT]\n"
    "      validate a safetensors file, index, GGUF file or artifact and\n"
    "      print its inventory, metadata and verdict\n"
    "  kernels [--json]\n"
    "      list the kernel capability registry (layouts, repacks, kernels)\n"
    "  tokenize FILE.gguf --text TEXT [--add-special] [--json]\n"
    "      print the token ids of TEXT under the GGUF file's tokenizer\n"
    "  run DIR [--op NAME] [--input FILE] [--tokens T] [--backend ...] "
    "[--json]\n"
    "      load an artifact (verify, admit, materialize) and run its linears\n"
    "  compile INPUT --target sm_80|sm_90|host -o DIR [--quant ...] [--tp N]\n"
    "      quantize a checkpoint, select kernels and write a verified "
    "artifact\n"
    "  verify DIR [--json]\n"
    "      run the parity ladder (L0-L3, L5) on an artifact\n"
    "  export-gguf DIR -o FILE.gguf [--dequantize] [--json]\n"
    "      write an artifact's model as a llama.cpp GGUF file\n"
    "run 'qtc COMMAND --help' for a command's options\n";
} // namespace

static int run(int argc, char **argv);

int main(int argc, char **argv) {
  qtensor::tools::setToolName("qtc");
  // A file truncated under one of qtc's mappings (a checkpoint being
  // compiled, an artifact being verified or run with --mmap) is an error
  // naming the file, not a crash (MappedFile.h).
  qtensor::installMappedFileFaultHandler("qtc");
  // Interrupted, a compile withdraws an unverified artifact and scratch
  // directories go (ExitCleanup.h).
  qtensor::installTerminationCleanup();
  // A memory or stack limit, or a fatal LLVM error, is one line and exit
  // status 1 (tools/common): any allocation that fails, in any thread, in
  // qtc's code, in LLVM's or through malloc. Allocations sized from a
  // file's fields fail earlier, as errors naming the file.
  if (!qtensor::tools::prepareToolMemory())
    return 1;
#ifdef QTENSOR_QTC_COMPILER
  qtensor::tools::installLLVMErrorHandlers();
#endif
  // The libraries report errors as values; nothing else should escape.
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::cerr << "qtc: error: " << e.what() << "\n";
    return 1;
  }
}

static int run(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  // Every command may run on the thread pool: a bad size is refused, not
  // silently replaced by the core count.
  if (std::string bad = qtensor::threadCountEnvironmentError(); !bad.empty()) {
    std::cerr << "qtc: " << bad << "\n";
    return 2;
  }
#ifdef QTENSOR_QTC_COMPILER
  // Kernels run from this installation's own build of an artifact's
  // records, never from the artifact's files (Runtime/ArtifactCode.h).
  qtensor::compiler::installTrustedCodeBuilders(
      qtensor::runtime::defaultArtifactCodePolicy());
#endif
  if (command == "inspect")
    return qtensor::qtc::runInspect(args);
  if (command == "kernels")
    return qtensor::qtc::runKernels(args);
  if (command == "run")
    return qtensor::qtc::runRun(args);
  if (command == "tokenize")
    return qtensor::qtc::runTokenize(args);
  if (command == "verify")
    return qtensor::qtc::runVerify(args);
  if (command == "export-gguf")
    return qtensor::qtc::runExportGGUF(args);
#if QTENSOR_QTC_COMPILER
  if (command == "compile")
    return qtensor::qtc::runCompile(args);
#else
  if (command == "compile") {
    std::cerr << "qtc: '" << command
              << "' needs the compiler; this qtc was built with "
                 "QTENSOR_ENABLE_MLIR=OFF\n";
    return 2;
  }
#endif
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "qtc: unknown command '" << command << "'\n" << kUsage;
  return 2;
}
