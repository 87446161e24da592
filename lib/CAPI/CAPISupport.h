//===- CAPISupport.h - Shared helpers of the C API --------------*- C++ -*-===//
#ifndef QTENSOR_LIB_CAPI_CAPISUPPORT_H
#define QTENSOR_LIB_CAPI_CAPISUPPORT_H

#include "qtensor/Compiler/TrustedCode.h"
#include "qtensor/Runtime/ArtifactCode.h"

#include <mutex>
#include <string>

namespace qtensor::capi {

/// A malloc'd copy the caller frees with qtensorFree.
char *copyString(const std::string &s);
/// Sets `*error` (when `error` is not null) to a copy of `message`.
void setError(char **error, const std::string &message);
/// The trusted-code builders, once per process: artifacts run this
/// installation's rebuild of their records, as under `qtc`.
void installBuilders();

} // namespace qtensor::capi

#endif // QTENSOR_LIB_CAPI_CAPISUPPORT_H
