//===- Kernels.cpp - `qtc kernels`: list the kernel registry --------------===//

#include "Kernels.h"

#include "CommandLine.h"

#include "qtensor/Kernels/Registry.h"

#include <iostream>

namespace {
const char *kKernelsUsage =
    "usage: qtc kernels [--json]\n"
    "  list the kernel capability registry: kernel-native layouts, the\n"
    "  code-preserving repacks into them, and every kernel's capability\n"
    "  signature (seed M8.9 0x07A)\n"
    "  --json   print the registry as one JSON object (schema\n"
    "           \"qtensor.kernels\", docs/kernels.md)\n"
    "exit status: 0 listed, 2 usage error\n";
} // namespace

int qtensor::qtc::runKernels(const std::vector<std::string> &args) {
  bool asJson = false;
  CommandLine cl("qtc kernels", kKernelsUsage);
  cl.flag({"--json"}, asJson);
  if (std::optional<int> status = cl.parse(args))
    return *status;
  const kernels::KernelRegistry &registry = kernels::builtinRegistry();
  if (asJson)
    std::cout << kernels::registryToJson(registry).dump(2) << "\n";
  else
    std::cout << kernels::registryToText(registry);
  return 0;
}
