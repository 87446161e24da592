//===- CompileCommand.h - `qtc compile` -------------------------*- C++ -*-===//
#ifndef QTENSOR_TOOLS_QTC_COMPILECOMMAND_H
#define QTENSOR_TOOLS_QTC_COMPILECOMMAND_H

#include <string>
#include <vector>

namespace qtensor::qtc {

/// Entry point for `qtc compile ARGS...`: flags into a CompileRequest, one
/// compileArtifact call, the result printed. Returns the process exit status
/// (0 compiled and verified, 1 failed, 2 usage).
int runCompile(const std::vector<std::string> &args);

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_COMPILECOMMAND_H
