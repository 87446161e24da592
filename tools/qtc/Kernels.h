//===- Kernels.h - `qtc kernels` --------------------------------*- C++ -*-===//
#ifndef QTENSOR_TOOLS_QTC_KERNELS_H
#define QTENSOR_TOOLS_QTC_KERNELS_H

#include <string>
#include <vector>

namespace qtensor::qtc {

/// Entry point for `qtc kernels [--json]`: lists the kernel capability
/// registry (docs/kernels.md); returns the process exit status.
int runKernels(const std::vector<std::string> &args);

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_KERNELS_H
