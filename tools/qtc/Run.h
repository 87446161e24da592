//===- Run.h - `qtc run` ----------------------------------------*- C++ -*-===//
#ifndef QTENSOR_TOOLS_QTC_RUN_H
#define QTENSOR_TOOLS_QTC_RUN_H

#include <string>
#include <vector>

namespace qtensor::qtc {

/// Entry point for `qtc run DIR [options]`: loads the artifact through the
/// runtime (runtime/, docs/runtime.md), runs one quantized linear or all of
/// them on the host or the GPU, and prints the outputs, the per-call
/// dispatch trace, the startup timeline and the memory ledgers. Returns the
/// process exit status (0 ran, 1 load/run/check failure, 2 usage error).
int runRun(const std::vector<std::string> &args);

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_RUN_H
