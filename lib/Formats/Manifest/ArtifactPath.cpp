//===- ArtifactPath.cpp - Safe file access under an artifact root ---------===//

#include "qtensor/Formats/ArtifactPath.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace qtensor;
using namespace qtensor::artifact;

//===----------------------------------------------------------------------===//
// Lexical rules
//===----------------------------------------------------------------------===//

/// A printable form of an untrusted path for messages.
static std::string printable(std::string_view path) {
  std::string out = "\"";
  size_t n = 0;
  for (char ch : path) {
    if (++n > 120) {
      out += "...";
      break;
    }
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

static std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      parts.push_back(path.substr(start));
      return parts;
    }
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

Status artifact::checkArtifactPath(std::string_view path) {
  auto bad = [&](const auto &...why) {
    return Status(makeError("path ", printable(path), ": ", why...));
  };
  if (path.empty())
    return bad("is empty");
  if (path.size() > kMaxPathBytes)
    return bad("is ", path.size(), " bytes long (the limit is ", kMaxPathBytes,
               ")");
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    if (c == 0)
      return bad("contains a NUL byte");
    if (c < 0x20 || c == 0x7f)
      return bad("contains a control character");
    if (c == '\\')
      return bad("contains a backslash (paths use '/' only)");
  }
  if (path.front() == '/')
    return bad("is absolute; artifact paths are relative to the artifact "
               "root");
  std::vector<std::string_view> parts = components(path);
  if (parts.size() > kMaxPathDepth)
    return bad("has ", parts.size(), " components (the limit is ",
               kMaxPathDepth, ")");
  for (std::string_view part : parts) {
    if (part.empty())
      return bad("has an empty component ('//' or a trailing '/')");
    if (part == "..")
      return bad("has a '..' component (paths must stay inside the artifact "
                 "root)");
    if (part == ".")
      return bad("has a '.' component");
    if (part.size() > kMaxComponentBytes)
      return bad("has a component of ", part.size(), " bytes (the limit is ",
                 kMaxComponentBytes, ")");
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// SHA-256
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// FileDescriptor
//===----------------------------------------------------------------------===//

FileDescriptor &FileDescriptor::operator=(FileDescriptor &&o) noexcept {
  if (this != &o)
    reset(o.release());
  return *this;
}

void FileDescriptor::reset(int newFd) {
  if (fd >= 0)
    ::close(fd);
  fd = newFd;
}

//===----------------------------------------------------------------------===//
// ArtifactRoot
//===----------------------------------------------------------------------===//

Expected<ArtifactRoot> ArtifactRoot::open(const std::string &dir) {
  if (dir.empty())
    return makeError("artifact directory: the path is empty");
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return makeError(
        dir, ": cannot open the artifact directory: ", std::strerror(errno));
  return ArtifactRoot(FileDescriptor(fd), dir);
}

std::string ArtifactRoot::display(std::string_view relative) const {
  std::string out = dirPath;
  if (!out.empty() && out.back() != '/')
    out += '/';
  out += relative;
  return out;
}

/// Describes what sits at `name` under `dirFd` for a refusal message.
static std::string describeEntry(int dirFd, const std::string &name) {
  struct stat st;
  if (::fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return std::strerror(errno);
  if (S_ISLNK(st.st_mode))
    return "is a symbolic link (refused: nothing below the artifact root may "
           "be a symbolic link)";
  if (S_ISDIR(st.st_mode))
    return "is a directory";
  if (S_ISFIFO(st.st_mode))
    return "is a FIFO, not a regular file";
  if (S_ISSOCK(st.st_mode))
    return "is a socket, not a regular file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    return "is a device, not a regular file";
  if (S_ISREG(st.st_mode))
    return "is a regular file";
  return "is not a regular file";
}

Expected<std::pair<FileDescriptor, std::string>>
ArtifactRoot::openParent(std::string_view relative) const {
  QTENSOR_TRY(checkArtifactPath(relative));
  std::vector<std::string_view> parts = components(relative);
  int dup = ::fcntl(dirFd.get(), F_DUPFD_CLOEXEC, 0);
  if (dup < 0)
    return makeError(display(relative),
                     ": cannot duplicate the root "
                     "descriptor: ",
                     std::strerror(errno));
  FileDescriptor dir(dup);
  std::string walked;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    std::string part(parts[i]);
    walked += (walked.empty() ? "" : "/") + part;
    int next = ::openat(dir.get(), part.c_str(),
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      int err = errno;
      if (err == ENOENT)
        return makeError(display(relative), ": directory ", display(walked),
                         " does not exist");
      return makeError(display(relative), ": directory component ",
                       display(walked), " cannot be opened: ",
                       err == ELOOP || err == ENOTDIR
                           ? describeEntry(dir.get(), part)
                           : std::string(std::strerror(err)));
    }
    dir.reset(next);
  }
  return std::make_pair(std::move(dir), std::string(parts.back()));
}

Expected<OpenedFile> ArtifactRoot::openFile(std::string_view relative,
                                            const OpenPolicy &policy) const {
  auto parent = openParent(relative);
  if (!parent)
    return parent.error();
  auto &[dir, leaf] = *parent;
  std::string name = display(relative);

  struct stat before;
  if (::fstatat(dir.get(), leaf.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    int err = errno;
    if (err == ENOENT)
      return makeError(name, ": missing (the manifest lists it)");
    return makeError(name, ": cannot stat: ", std::strerror(err));
  }
  if (!S_ISREG(before.st_mode))
    return makeError(name, ": ", describeEntry(dir.get(), leaf),
                     "; expected a regular file");

  int fd = ::openat(dir.get(), leaf.c_str(),
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP)
      return makeError(name, ": ", describeEntry(dir.get(), leaf));
    return makeError(name, ": cannot open: ", std::strerror(err));
  }
  OpenedFile file;
  file.fd.reset(fd);

  // Identity after open: the descriptor must be the regular file that was
  // checked a moment ago, not something swapped in between.
  struct stat after;
  if (::fstat(fd, &after) != 0)
    return makeError(name,
                     ": cannot stat the opened file: ", std::strerror(errno));
  if (!S_ISREG(after.st_mode))
    return makeError(name, ": the opened object is not a regular file");
  if (after.st_dev != before.st_dev || after.st_ino != before.st_ino)
    return makeError(name,
                     ": the file changed between check and open "
                     "(device/inode ",
                     static_cast<uint64_t>(before.st_dev), "/",
                     static_cast<uint64_t>(before.st_ino), " before, ",
                     static_cast<uint64_t>(after.st_dev), "/",
                     static_cast<uint64_t>(after.st_ino), " after)");
  if (after.st_nlink > 1 && !policy.allowHardLinks)
    return makeError(name, ": has ", static_cast<uint64_t>(after.st_nlink),
                     " hard links (refused: another name of the same file "
                     "may live outside the artifact root; expected 1)");
  if (after.st_size < 0)
    return makeError(name, ": negative file size");
  file.size = static_cast<uint64_t>(after.st_size);
  file.device = static_cast<uint64_t>(after.st_dev);
  file.inode = static_cast<uint64_t>(after.st_ino);
  return file;
}

namespace {
/// The manifest's size against the opened file's.
Status sizeAsListed(const std::string &name, uint64_t size, uint64_t bytes) {
  if (size != bytes)
    return makeError(name, ": size is ", size, " bytes but the manifest says ",
                     bytes);
  return Status::ok();
}

/// The manifest's SHA-256 against the digest of the bytes held.
Status digestAsListed(const std::string &name,
                      const Expected<std::string> &digest,
                      std::string_view sha256) {
  if (!digest)
    return makeError(name, ": ", digest.message());
  if (*digest != sha256)
    return makeError(name, ": SHA-256 mismatch: the manifest expects ", sha256,
                     ", the file has ", *digest);
  return Status::ok();
}
} // namespace

Expected<MappedFile>
ArtifactRoot::openVerified(std::string_view relative, uint64_t bytes,
                           std::string_view sha256,
                           const OpenPolicy &policy) const {
  auto opened = openFile(relative, policy);
  if (!opened)
    return opened.error();
  std::string name = display(relative);
  QTENSOR_TRY(sizeAsListed(name, opened->size, bytes));
  auto mapped = MappedFile::fromDescriptor(opened->fd.release(), name);
  if (!mapped)
    return mapped.error();
  // The mapping's length comes from its own fstat: check it again.
  if (mapped->size() != bytes)
    return makeError(name, ": size changed to ", mapped->size(),
                     " bytes while it was opened; the manifest says ", bytes);
  QTENSOR_TRY(digestAsListed(
      name, sha256HexOfMapped(mapped->data(), mapped->size()), sha256));
  return mapped.take();
}

Expected<MappedFile>
ArtifactRoot::readVerified(std::string_view relative, uint64_t bytes,
                           std::string_view sha256,
                           const OpenPolicy &policy) const {
  auto opened = openFile(relative, policy);
  if (!opened)
    return opened.error();
  std::string name = display(relative);
  QTENSOR_TRY(sizeAsListed(name, opened->size, bytes));
  QTENSOR_ASSIGN_OR_RETURN(Sha256Stream hash, Sha256Stream::create());
  auto copy = MappedFile::readCopy(
      opened->fd.release(), name, bytes,
      [&](const uint8_t *chunk, size_t n) { return hash.update(chunk, n); });
  if (!copy)
    return copy.error();
  QTENSOR_TRY(digestAsListed(name, hash.finishHex(), sha256));
  return copy.take();
}
