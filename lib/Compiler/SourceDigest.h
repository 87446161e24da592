//===- SourceDigest.h - The checkpoint's digest, hashed beside the rest ---===//
//
// The provenance digest of a checkpoint (detail::digestFiles) reads every
// byte of its files once. Computed when the checkpoint opened, it kept the
// other cores idle for seconds at multi-gigabyte sizes while nothing else
// could start; only the manifest, written last, needs it. So the files are
// hashed on a thread of their own from the moment the checkpoint opens, and
// reading the digest waits for that thread. Dropping the last copy of a
// digest still running cancels it (between 8 MiB chunks) and joins it.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_SOURCEDIGEST_H
#define QTENSOR_LIB_COMPILER_SOURCEDIGEST_H

#include "qtensor/Support/Expected.h"

#include <memory>
#include <string>
#include <vector>

namespace qtensor::compiler {

class SourceDigest {
public:
  /// No files: get() says the digest was never started.
  SourceDigest() = default;
  /// Starts hashing `paths` (in this order). Where no thread can be
  /// started, hashes them now, on the caller's thread.
  static SourceDigest start(std::vector<std::string> paths);

  /// The digest, or why it could not be computed; waits for the thread.
  Expected<std::string> get() const;

private:
  struct State;
  std::shared_ptr<State> state;
};

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_SOURCEDIGEST_H
