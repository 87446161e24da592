//===- Inspect.h - `qtc inspect` --------------------------------*- C++ -*-===//
#ifndef QTENSOR_TOOLS_QTC_INSPECT_H
#define QTENSOR_TOOLS_QTC_INSPECT_H

#include <string>
#include <vector>

namespace qtensor::qtc {

/// Entry point for `qtc inspect ARGS...`; returns the process exit status.
int runInspect(const std::vector<std::string> &args);

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_INSPECT_H
