//===- VerifiedFiles.h - An artifact's files, held and checked --*- C++ -*-===//
//
// The files a manifest lists, opened under the root's path policy
// (ArtifactPath.h), held (read into private memory, or mapped) and checked
// against the manifest's size and digests before anyone reads them.
//
// A file listed with chunk digests (FileEntry::chunks) is hashed by pieces
// on every thread of the default pool at once, so that one large shard does
// not load at the speed of one core's SHA-256; a file without them is
// hashed whole, as it is read. Either way each byte is hashed once, unless
// DigestCheck::All asks for every digest the manifest lists.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_VERIFIEDFILES_H
#define QTENSOR_FORMATS_VERIFIEDFILES_H

#include "qtensor/Formats/ArtifactPath.h"
#include "qtensor/Formats/Manifest.h"

#include <vector>

namespace qtensor::artifact {

enum class HoldAs {
  Copy,    ///< read into private memory (ArtifactRoot::readVerified)
  Mapping, ///< mapped (ArtifactRoot::openVerified)
};

enum class DigestCheck {
  /// Each byte hashed once: a file's chunk digests where the manifest lists
  /// them, else its SHA-256.
  Once,
  /// The SHA-256 and the chunk digests both (qtc verify's L0), so that a
  /// manifest whose two records of a file disagree is caught.
  All,
};

struct HoldOptions {
  HoldAs as = HoldAs::Copy;
  DigestCheck check = DigestCheck::Once;
  OpenPolicy policy;
};

/// Every file of `files`, held and checked; results in the order of
/// `files`. Files are opened and read concurrently, then the chunked ones
/// hashed one after another, each on every thread.
std::vector<Expected<MappedFile>>
holdVerifiedFiles(const ArtifactRoot &root,
                  const std::vector<const FileEntry *> &files,
                  const HoldOptions &options);

/// The same for one file.
Expected<MappedFile> holdVerifiedFile(const ArtifactRoot &root,
                                      const FileEntry &file,
                                      const HoldOptions &options);

} // namespace qtensor::artifact

#endif // QTENSOR_FORMATS_VERIFIEDFILES_H
