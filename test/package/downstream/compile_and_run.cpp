// Compiles a checkpoint through the installed compiler library
// (qtensor::compiler::compileArtifact), then loads the artifact with the
// installed runtime and runs every linear once.
// Usage: compile_and_run CHECKPOINT_DIR OUT_DIR. Exit 0 on success.
#include "qtensor/Compiler/Compile.h"
#include "qtensor/Compiler/TrustedCode.h"
#include "qtensor/Runtime/Activations.h"
#include "qtensor/Runtime/Loader.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace {
/// Counts the stages it is told about.
class CountingProgress final : public qtensor::ProgressSink {
public:
  int stages = 0;
  void stage(const std::string &key, const std::string &, int, int) override {
    ++stages;
    std::printf("stage %s\n", key.c_str());
  }
  void advance(uint64_t, uint64_t, const std::string &) override {}
  void finish(const std::string &) override {}
};
} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: compile_and_run CHECKPOINT_DIR OUT_DIR\n");
    return 2;
  }
  qtensor::compiler::CompileRequest request;
  request.input = argv[1];
  request.outputDir = argv[2];
  request.target = "host";
  CountingProgress progress;
  auto compiled = qtensor::compiler::compileArtifact(request, &progress);
  if (!compiled) {
    std::fprintf(stderr, "compile failed: %s\n", compiled.message().c_str());
    return 1;
  }
  if (!compiled->verified) {
    std::fprintf(stderr, "the artifact failed its parity ladder\n");
    return 1;
  }
  std::printf("compiled %zu linears, %d stages, verified\n", compiled->linears,
              progress.stages);

  qtensor::runtime::LoadOptions options;
  options.backend = qtensor::runtime::BackendChoice::Host;
  // The artifact's own kernel code is never loaded: the compiler library
  // rebuilds the kernels it records (qtensor/Runtime/ArtifactCode.h).
  qtensor::compiler::installTrustedCodeBuilders(options.code);
  auto loaded = qtensor::runtime::loadModel(request.outputDir, options);
  if (!loaded) {
    std::fprintf(stderr, "load failed: %s\n", loaded.message().c_str());
    return 1;
  }
  size_t ran = 0;
  for (const qtensor::runtime::OpPlan &op : (*loaded)->plan().ops) {
    auto x = qtensor::runtime::deterministicActivations(
        op.activation, 2, op.k(), qtensor::runtime::kDefaultActivationSeed,
        op.tensor);
    if (!x)
      return 1;
    auto y = (*loaded)->run(op.tensor, *x);
    if (!y || y->rows != 2 || y->cols != op.n()) {
      std::fprintf(stderr, "run %s failed: %s\n", op.tensor.c_str(),
                   y ? "wrong shape" : y.message().c_str());
      return 1;
    }
    ++ran;
  }
  std::printf("ran %zu linears on %s\n", ran, (*loaded)->backend().c_str());
  return ran == compiled->linears ? 0 : 1;
}
