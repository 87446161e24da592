//===- InputKind.cpp - What kind of input a path names --------------------===//

#include "qtensor/Formats/InputKind.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace qtensor;

namespace {
bool isManifestPath(const std::string &path) {
  static const std::string name = "/manifest.json";
  return path == "manifest.json" ||
         (path.size() >= name.size() &&
          path.compare(path.size() - name.size(), name.size(), name) == 0);
}
} // namespace

std::string qtensor::artifactDirectoryOf(const std::string &path) {
  if (!isManifestPath(path))
    return path;
  return path == "manifest.json" ? "." : path.substr(0, path.size() - 14);
}

Expected<InputKind> qtensor::detectInputKind(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return makeError(path, ": ", std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return InputKind::ArtifactDirectory;
  // A FIFO or device would block or never end: not an input.
  if (!S_ISREG(st.st_mode))
    return makeError(path, ": not a regular file or directory");
  if (isManifestPath(path))
    return InputKind::ArtifactDirectory;
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0)
    return InputKind::Index;
  char magic[4] = {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = ::read(fd, magic, sizeof(magic));
    ::close(fd);
    if (n == 4 && std::memcmp(magic, "GGUF", 4) == 0)
      return InputKind::GGUF;
  }
  return InputKind::Safetensors;
}
