//===- VerifyCommand.h - `qtc verify` ---------------------------*- C++ -*-===//
#ifndef QTENSOR_TOOLS_QTC_VERIFYCOMMAND_H
#define QTENSOR_TOOLS_QTC_VERIFYCOMMAND_H

#include <string>
#include <vector>

namespace qtensor::qtc {

/// `qtc verify DIR [--json]`: runs the parity ladder (Ladder.h) on the
/// artifact in DIR. Exit status 0 only when every level passes, 1 when one
/// fails, 2 on a usage error.
int runVerify(const std::vector<std::string> &args);

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_VERIFYCOMMAND_H
