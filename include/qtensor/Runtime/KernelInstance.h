//===- KernelInstance.h - One compiled kernel of an artifact ----*- C++ -*-===//
//
// The runtime's view of `manifest.kernels[i]`: the typed record
// (Formats/KernelEntry.h), read and checked by the manifest's own reader,
// with its position for messages. The checks against the op an entry binds
// (N, K, packed words, qparam shapes) and against this build's registry are
// the planner's (Plan.h).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_KERNELINSTANCE_H
#define QTENSOR_RUNTIME_KERNELINSTANCE_H

#include "qtensor/Formats/Manifest.h"

#include <cstddef>
#include <string>

namespace qtensor::runtime {

using artifact::ArgRole;
using artifact::ArgType;
using artifact::argTypeOf;
using artifact::byteWidth;
using artifact::EntryPoint;
using artifact::kDynamic;
using artifact::KernelArg;
using artifact::KernelFormat;
using artifact::kMaxDimension;
using artifact::LaunchConfig;
using artifact::parseArgType;
using artifact::toString;

/// One manifest kernel entry as the planner uses it: the record and where
/// it sits in the manifest.
struct KernelInstance : artifact::KernelEntry {
  size_t index = 0; ///< position in manifest.kernels

  /// "manifest.kernels[3] (qt_decode_...)" for messages.
  std::string where() const;
  /// A native entry's code file (the record's reader requires one; the
  /// reference entry has none and is never asked).
  const std::string &codeFile() const { return file.value(); }
};

/// `manifest.kernels[index]`, which the manifest's validation has checked.
KernelInstance kernelInstanceOf(const artifact::Manifest &m, size_t index);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_KERNELINSTANCE_H
