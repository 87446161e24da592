//===- ArtifactPath.h - Safe file access under an artifact root -*- C++ -*-===//
//
// A manifest names its files by path; those paths are untrusted and the
// filesystem is a trust boundary of its own (seed M8.9 0x0CC): a parser-safe
// container does not make path resolution safe.
//
// Lexical rules (checkArtifactPath): a path is relative and stays inside the
// root. Rejected: the empty path, a leading '/', empty components ("a//b",
// a trailing '/'), "." and ".." components, a backslash, NUL and other
// control characters (U+0000-U+001F, U+007F), a component longer than
// kMaxComponentBytes, a path longer than kMaxPathBytes or deeper than
// kMaxPathDepth components. (validateManifest adds one rule of its own: no
// component may start with the writer's temporary prefix kTempPrefix, so a
// temporary is never reachable from a manifest.)
//
// Filesystem policy (ArtifactRoot::openFile):
//  - the root directory itself is opened by the caller's path (it may be a
//    symbolic link: the caller chose it); everything below it is resolved
//    with openat, one component at a time, with O_NOFOLLOW;
//  - symbolic links are refused anywhere below the root, including links
//    that point to a file inside the artifact: the manifest must name the
//    object itself, so what was hashed is what is named, and no link can be
//    swapped to point elsewhere between validation and use;
//  - only regular files are opened (not directories, FIFOs, devices or
//    sockets; opens use O_NONBLOCK so a FIFO cannot hang the loader);
//  - identity is checked after open, not only before: fstat of the opened
//    descriptor must show a regular file with the st_dev/st_ino that
//    fstatat(AT_SYMLINK_NOFOLLOW) reported for the same name just before;
//  - hard links (st_nlink > 1) are refused unless OpenPolicy::allowHardLinks:
//    another name of the same inode may live outside the root, and the
//    writer never produces them;
//  - readVerified then checks the size against the manifest, reads the file
//    into private memory and checks the SHA-256 of exactly those bytes,
//    which every later reader sees: a file truncated or rewritten after
//    that cannot change them (the runtime loads this way).
//  - openVerified checks the same of a mapping, for readers that stream
//    through files larger than they want resident (the parity ladder). A
//    mapped file must not be modified while in use: a truncated one faults
//    on access (SIGBUS; MappedFile.h names the file when a program installs
//    the handler), a rewritten one shows its new bytes.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_ARTIFACTPATH_H
#define QTENSOR_FORMATS_ARTIFACTPATH_H

#include "qtensor/Support/Expected.h"
#include "qtensor/Support/MappedFile.h"
#include "qtensor/Support/Sha256.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace qtensor::artifact {

inline constexpr size_t kMaxPathBytes = 1024;
inline constexpr size_t kMaxComponentBytes = 255;
inline constexpr size_t kMaxPathDepth = 16;
/// Names the writer uses for files that are not published yet.
inline constexpr const char *kTempPrefix = ".qtensor-tmp-";

/// The lexical rules above. The error names the path and the broken rule.
Status checkArtifactPath(std::string_view path);

/// SHA-256 as 64 lowercase hex digits (qtensor/Support/Sha256.h).
using ::qtensor::sha256Hex;

/// An owned file descriptor (closed on destruction).
class FileDescriptor {
public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd(fd) {}
  FileDescriptor(FileDescriptor &&o) noexcept : fd(o.release()) {}
  FileDescriptor &operator=(FileDescriptor &&o) noexcept;
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  ~FileDescriptor() { reset(); }

  int get() const { return fd; }
  bool valid() const { return fd >= 0; }
  int release() {
    int r = fd;
    fd = -1;
    return r;
  }
  void reset(int newFd = -1);

private:
  int fd = -1;
};

struct OpenPolicy {
  /// Accept regular files with more than one hard link.
  bool allowHardLinks = false;
};

/// A regular file opened under the root, with the identity it was opened by.
struct OpenedFile {
  FileDescriptor fd;
  uint64_t size = 0;
  uint64_t device = 0;
  uint64_t inode = 0;
};

/// An O_DIRECTORY descriptor for the artifact root; every access below it is
/// relative to that descriptor.
class ArtifactRoot {
public:
  /// Opens `dir`, which must be a directory.
  static Expected<ArtifactRoot> open(const std::string &dir);

  int fd() const { return dirFd.get(); }
  const std::string &path() const { return dirPath; }
  /// "<root>/<relative>" for messages.
  std::string display(std::string_view relative) const;

  /// Opens `relative` read-only under the policy above.
  Expected<OpenedFile> openFile(std::string_view relative,
                                const OpenPolicy &policy = {}) const;
  /// openFile, then: size == `bytes`, map it, SHA-256 of the mapping ==
  /// `sha256`. The mapping is named by display(relative).
  Expected<MappedFile> openVerified(std::string_view relative, uint64_t bytes,
                                    std::string_view sha256,
                                    const OpenPolicy &policy = {}) const;
  /// openFile, then: size == `bytes`, read it once into private memory
  /// (MappedFile::readCopy), hashing each chunk as it is read, and SHA-256
  /// == `sha256`. Named by display(relative).
  Expected<MappedFile> readVerified(std::string_view relative, uint64_t bytes,
                                    std::string_view sha256,
                                    const OpenPolicy &policy = {}) const;
  /// Opens the directory that contains `relative` (component by component,
  /// O_NOFOLLOW) and returns it with the final component's name. For a
  /// top-level name this is a duplicate of the root descriptor.
  Expected<std::pair<FileDescriptor, std::string>>
  openParent(std::string_view relative) const;

private:
  ArtifactRoot(FileDescriptor fd, std::string path)
      : dirFd(std::move(fd)), dirPath(std::move(path)) {}
  FileDescriptor dirFd;
  std::string dirPath;
};

} // namespace qtensor::artifact

#endif // QTENSOR_FORMATS_ARTIFACTPATH_H
