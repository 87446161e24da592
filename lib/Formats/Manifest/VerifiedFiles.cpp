//===- VerifiedFiles.cpp - An artifact's files, held and checked ----------===//

#include "qtensor/Formats/VerifiedFiles.h"

#include "qtensor/Support/Sha256.h"
#include "qtensor/Support/ThreadPool.h"

#include <algorithm>
#include <optional>

using namespace qtensor;
using namespace qtensor::artifact;

namespace {

/// A listed file on its way to being held: a file without chunk digests is
/// held and hashed whole in one step (readVerified/openVerified); a chunked
/// one is opened and its size checked first, then read and hashed by
/// pieces on every thread.
struct Pending {
  std::optional<Expected<MappedFile>> held;
  std::optional<OpenedFile> opened; ///< a chunked file, not yet read
};

Status openChunked(const ArtifactRoot &root, const FileEntry &f,
                   const HoldOptions &options, Pending &p) {
  QTENSOR_ASSIGN_OR_RETURN(OpenedFile opened,
                           root.openFile(f.path, options.policy));
  if (opened.size != f.bytes)
    return makeError(root.display(f.path), ": size is ", opened.size,
                     " bytes but the manifest says ", f.bytes);
  p.opened.emplace(std::move(opened));
  return Status::ok();
}

void openOrHold(const ArtifactRoot &root, const FileEntry &f,
                const HoldOptions &options, Pending &p) {
  if (!f.chunks) {
    p.held.emplace(
        options.as == HoldAs::Copy
            ? root.readVerified(f.path, f.bytes, f.sha256, options.policy)
            : root.openVerified(f.path, f.bytes, f.sha256, options.policy));
    return;
  }
  if (Status s = openChunked(root, f, options, p); !s)
    p.held.emplace(s.error());
}

/// Reads (or maps) a chunked file and hashes its pieces, every thread on
/// one file; with DigestCheck::All its SHA-256 too.
Expected<MappedFile> holdChunked(const FileEntry &f, OpenedFile opened,
                                 const std::string &name,
                                 const HoldOptions &options) {
  const ChunkDigests &chunks = *f.chunks;
  // validateManifest's rules, again: this is a library entry point, and a
  // piece size of 0 or a wrong count must not reach the division below.
  if (chunks.bytes < kMinDigestChunkBytes ||
      chunks.bytes > kMaxDigestChunkBytes ||
      chunks.sha256.size() !=
          f.bytes / chunks.bytes + (f.bytes % chunks.bytes != 0))
    return makeError(name, ": the manifest's chunk digests (", chunks.bytes,
                     "-byte pieces, ", chunks.sha256.size(),
                     " digests) do not describe a file of ", f.bytes, " bytes");
  bool all = options.check == DigestCheck::All;
  PieceDigests digests;
  std::optional<MappedFile> held;
  if (options.as == HoldAs::Copy) {
    // Each piece hashed by the thread that reads it, chunk by chunk while
    // the chunk is still in cache.
    std::vector<std::optional<Sha256Stream>> streams(chunks.sha256.size());
    for (auto &stream : streams) {
      QTENSOR_ASSIGN_OR_RETURN(Sha256Stream created, Sha256Stream::create());
      stream.emplace(std::move(created));
    }
    QTENSOR_ASSIGN_OR_RETURN(
        MappedFile copy,
        MappedFile::readCopyInPieces(
            opened.fd.release(), name, f.bytes, chunks.bytes,
            [&](size_t piece, const uint8_t *data, size_t n) -> Status {
              if (piece >= streams.size())
                return makeError("piece ", piece, " of ", streams.size());
              return streams[piece]->update(data, n);
            }));
    for (auto &stream : streams) {
      QTENSOR_ASSIGN_OR_RETURN(std::string hex, stream->finishHex());
      digests.pieces.push_back(std::move(hex));
    }
    if (all) {
      QTENSOR_ASSIGN_OR_RETURN(digests.whole,
                               sha256Hex(copy.data(), size_t(copy.size())));
    }
    held.emplace(std::move(copy));
  } else {
    QTENSOR_ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::fromDescriptor(
                                                    opened.fd.release(), name));
    // A mapping's length comes from its own fstat: check it again.
    if (mapped.size() != f.bytes)
      return makeError(name, ": size changed to ", mapped.size(),
                       " bytes while it was opened; the manifest says ",
                       f.bytes);
    QTENSOR_ASSIGN_OR_RETURN(
        digests,
        sha256Pieces(mapped.data(), size_t(mapped.size()), chunks.bytes, all));
    held.emplace(std::move(mapped));
  }
  if (all && digests.whole != f.sha256)
    return makeError(name, ": SHA-256 mismatch: the manifest expects ",
                     f.sha256, ", the file has ", digests.whole);
  if (digests.pieces.size() != chunks.sha256.size()) // checked above
    return makeError(name, ": ", digests.pieces.size(),
                     " pieces, but the manifest lists ", chunks.sha256.size(),
                     " chunk digests");
  for (size_t i = 0; i < chunks.sha256.size(); ++i)
    if (digests.pieces[i] != chunks.sha256[i]) {
      uint64_t begin = uint64_t(i) * chunks.bytes;
      uint64_t end = std::min<uint64_t>(begin + chunks.bytes, f.bytes);
      return makeError(name, ": SHA-256 mismatch in bytes [", begin, ", ", end,
                       ") (chunk ", i, " of ", chunks.sha256.size(),
                       "): the manifest expects ", chunks.sha256[i],
                       ", the file has ", digests.pieces[i]);
    }
  return std::move(*held);
}

} // namespace

std::vector<Expected<MappedFile>>
artifact::holdVerifiedFiles(const ArtifactRoot &root,
                            const std::vector<const FileEntry *> &files,
                            const HoldOptions &options) {
  // Every file opened (and an unchunked one read and hashed) concurrently,
  // one file per thread; then the chunked ones one after another, each on
  // every thread. Results in the order of `files`, so the error reported
  // does not depend on timing.
  std::vector<Pending> pending(files.size());
  defaultThreadPool().parallelFor(files.size(), [&](size_t i) {
    try {
      openOrHold(root, *files[i], options, pending[i]);
    } catch (const std::exception &e) { // the pool's bodies must not throw
      pending[i].held.emplace(
          makeError(root.display(files[i]->path), ": ", e.what()));
    }
  });
  std::vector<Expected<MappedFile>> out;
  out.reserve(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    Pending &p = pending[i];
    if (!p.held)
      p.held.emplace(holdChunked(*files[i], std::move(*p.opened),
                                 root.display(files[i]->path), options));
    out.push_back(std::move(*p.held));
  }
  return out;
}

Expected<MappedFile> artifact::holdVerifiedFile(const ArtifactRoot &root,
                                                const FileEntry &file,
                                                const HoldOptions &options) {
  std::vector<Expected<MappedFile>> held =
      holdVerifiedFiles(root, {&file}, options);
  return std::move(held.front());
}
