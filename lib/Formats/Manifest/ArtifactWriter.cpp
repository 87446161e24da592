//===- ArtifactWriter.cpp - Transactional artifact writing ----------------===//
//
// See ArtifactWriter.h for the sequence and why the previous artifact
// survives every step before the publish.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/ArtifactWriter.h"

#include "qtensor/Formats/Artifact.h"
#include "qtensor/Support/CheckedMath.h"
#include "qtensor/Support/FileIO.h"
#include "qtensor/Support/MappedFile.h"
#include "qtensor/Support/Sha256.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace qtensor;
using namespace qtensor::artifact;
using safetensors::SafetensorsFile;
using safetensors::SafetensorsWriter;

/// Hex digits of the SHA-256 carried by a content-addressed name.
static constexpr size_t kAddressDigits = 16;
/// Longest name a caller may add: leaves room in NAME_MAX (255) for the
/// temporary prefix and the content address.
static constexpr size_t kMaxAddedNameBytes = 200;

const char *artifact::toString(WriteStep step) {
  switch (step) {
  case WriteStep::OpenDirectory:
    return "open-directory";
  case WriteStep::ReadPrevious:
    return "read-previous";
  case WriteStep::CreateTemp:
    return "create-temp";
  case WriteStep::WriteTemp:
    return "write-temp";
  case WriteStep::SyncTemp:
    return "sync-temp";
  case WriteStep::VerifyTemp:
    return "verify-temp";
  case WriteStep::RenameFile:
    return "rename-file";
  case WriteStep::SyncDirectory:
    return "sync-directory";
  case WriteStep::WriteManifest:
    return "write-manifest";
  case WriteStep::SyncManifest:
    return "sync-manifest";
  case WriteStep::VerifyManifest:
    return "verify-manifest";
  case WriteStep::PublishManifest:
    return "publish-manifest";
  case WriteStep::SyncPublished:
    return "sync-published";
  case WriteStep::CollectGarbage:
    return "collect-garbage";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Adding content
//===----------------------------------------------------------------------===//

static Status checkAddedName(const std::string &name, const char *what) {
  if (Status s = checkArtifactPath(name); !s)
    return makeError("artifact writer: ", what, ": ", s.message());
  if (name.find('/') != std::string::npos)
    return makeError("artifact writer: ", what, " \"", name,
                     "\": files are written flat in the artifact root (no "
                     "'/')");
  if (name.size() > kMaxAddedNameBytes)
    return makeError("artifact writer: ", what, " \"", name.substr(0, 40),
                     "...\": ", name.size(), " bytes (the limit is ",
                     kMaxAddedNameBytes, ")");
  if (name.rfind(kTempPrefix, 0) == 0)
    return makeError("artifact writer: ", what, " \"", name,
                     "\": the prefix \"", kTempPrefix,
                     "\" is reserved for temporaries");
  if (name == kManifestFileName)
    return makeError("artifact writer: ", what,
                     " \"manifest.json\" is the manifest itself");
  return Status::ok();
}

ArtifactWriter::Shard *ArtifactWriter::findShard(const std::string &name) {
  for (Shard &s : shards)
    if (s.name == name)
      return &s;
  return nullptr;
}

Status ArtifactWriter::checkNewStored(const std::string &shard,
                                      const TensorData &t) const {
  QTENSOR_TRY(checkAddedName(shard, "shard"));
  if (shard.size() < 12 ||
      shard.compare(shard.size() - 12, 12, ".safetensors") != 0)
    return makeError("artifact writer: shard \"", shard,
                     "\": shard names end in \".safetensors\"");
  for (size_t i = 0; i < t.shape.size(); ++i)
    if (t.shape[i] < 0)
      return makeError("artifact writer: tensor \"", t.name, "\": shape[", i,
                       "] = ", t.shape[i], " is negative");
  auto count = checkedElementCount(t.shape);
  auto need = count ? checkedMul(*count, safetensors::dtypeSize(t.dtype))
                    : std::nullopt;
  if (!need)
    return makeError("artifact writer: tensor \"", t.name,
                     "\": byte size overflows 64 bits");
  if (*need != t.size)
    return makeError("artifact writer: tensor \"", t.name,
                     "\": ", safetensors::dtypeName(t.dtype), " ",
                     shapeToString(t.shape), " needs ", *need, " bytes but ",
                     t.size, " were given");
  if (t.fill) {
    if (t.data)
      return makeError("artifact writer: tensor \"", t.name,
                       "\": both data and a fill function");
    if (t.sha256.size() != 64)
      return makeError("artifact writer: tensor \"", t.name,
                       "\": a filled tensor declares its SHA-256");
    return Status::ok();
  }
  if (t.size > 0 && !t.data)
    return makeError("artifact writer: tensor \"", t.name,
                     "\": null data pointer");
  return Status::ok();
}

Status ArtifactWriter::addPlainTensor(const std::string &shard,
                                      TensorData tensor) {
  QTENSOR_TRY(checkNewStored(shard, tensor));
  TensorEntry e;
  e.name = tensor.name;
  e.file = shard;
  e.data = PlainTensor{tensor.dtype, tensor.shape};
  Shard *s = findShard(shard);
  if (!s)
    s = &shards.emplace_back(Shard{shard, {}});
  s->tensors.push_back(std::move(tensor));
  tensors.push_back(std::move(e));
  return Status::ok();
}

Status ArtifactWriter::addQuantizedTensor(
    const std::string &shard, std::string name,
    QuantizedTensorDescriptor logical, TensorData codes, TensorData scales,
    std::optional<TensorData> zeros, std::optional<TensorData> superScales,
    std::optional<TensorData> superZeros, TensorUse use) {
  QTENSOR_TRY(checkNewStored(shard, codes));
  QTENSOR_TRY(checkNewStored(shard, scales));
  for (const std::optional<TensorData> *t : {&zeros, &superScales, &superZeros})
    if (*t)
      QTENSOR_TRY(checkNewStored(shard, **t));
  TensorEntry e;
  e.name = std::move(name);
  e.file = shard;
  QuantizedTensor q;
  q.logical = std::move(logical);
  q.use = use;
  q.codes = StoredTensor{codes.name, codes.dtype, codes.shape};
  q.scales = StoredTensor{scales.name, scales.dtype, scales.shape};
  auto stored = [](const std::optional<TensorData> &t) {
    return t ? std::optional(StoredTensor{t->name, t->dtype, t->shape})
             : std::nullopt;
  };
  q.zeros = stored(zeros);
  q.superScales = stored(superScales);
  q.superZeros = stored(superZeros);
  e.data = std::move(q);
  Shard *s = findShard(shard);
  if (!s)
    s = &shards.emplace_back(Shard{shard, {}});
  s->tensors.push_back(std::move(codes));
  s->tensors.push_back(std::move(scales));
  for (std::optional<TensorData> *t : {&zeros, &superScales, &superZeros})
    if (*t)
      s->tensors.push_back(std::move(**t));
  tensors.push_back(std::move(e));
  return Status::ok();
}

Status ArtifactWriter::addMixed2416Tensor(const std::string &shard,
                                          std::string name,
                                          Mixed2416Descriptor logical,
                                          std::vector<TensorData> streams) {
  Mixed2416Tensor m;
  m.logical = std::move(logical);
  auto slots = m.streams();
  if (streams.size() != slots.size())
    return makeError("artifact writer: mixed_2416 tensor \"", name,
                     "\": ", streams.size(), " streams given, the family has ",
                     slots.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    QTENSOR_TRY(checkNewStored(shard, streams[i]));
    *slots[i].second =
        StoredTensor{streams[i].name, streams[i].dtype, streams[i].shape};
  }
  TensorEntry e;
  e.name = std::move(name);
  e.file = shard;
  e.data = std::move(m);
  Shard *s = findShard(shard);
  if (!s)
    s = &shards.emplace_back(Shard{shard, {}});
  for (TensorData &t : streams)
    s->tensors.push_back(std::move(t));
  tensors.push_back(std::move(e));
  return Status::ok();
}

Status ArtifactWriter::addFile(std::string name, FileRole role,
                               std::vector<uint8_t> bytes) {
  QTENSOR_TRY(checkAddedName(name, "file"));
  if (role == FileRole::Shard)
    return makeError("artifact writer: file \"", name,
                     "\": shards are built from tensors (addPlainTensor, "
                     "addQuantizedTensor), not added as bytes");
  blobs.push_back(Blob{std::move(name), role, std::move(bytes)});
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
std::string contentAddressedName(const std::string &name,
                                 const std::string &sha);
} // namespace

Expected<std::string>
ArtifactWriter::publishedName(const std::string &name,
                              const WriteOptions &options) const {
  for (const Blob &b : blobs) {
    if (b.name != name)
      continue;
    if (!options.contentAddressedNames)
      return name;
    QTENSOR_ASSIGN_OR_RETURN(std::string sha,
                             sha256Hex(b.bytes.data(), b.bytes.size()));
    return contentAddressedName(name, sha);
  }
  return makeError("artifact writer: no file \"", name, "\" was added");
}

namespace {

std::string randomHex() {
  static uint64_t counter = 0;
  uint64_t x =
      static_cast<uint64_t>(
          std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (++counter * 0x9e3779b97f4a7c15ull);
  try {
    std::random_device rd;
    x ^= (static_cast<uint64_t>(rd()) << 32) ^ rd();
  } catch (...) {
    // The clock, the counter and O_EXCL still make collisions harmless.
  }
  static const char hex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 0; i < 16; ++i)
    out[i] = hex[(x >> (4 * i)) & 15];
  return out;
}

std::string contentAddressedName(const std::string &name,
                                 const std::string &sha) {
  std::string address = sha.substr(0, kAddressDigits);
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0)
    return name + "." + address;
  return name.substr(0, dot) + "." + address + name.substr(dot);
}

/// Whether `name` looks like "<stem>.<16 hex>[.<ext>]"; returns the digits.
std::optional<std::string> contentAddressOf(const std::string &name) {
  auto isAddress = [](std::string_view s) {
    if (s.size() != kAddressDigits)
      return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
  };
  size_t last = name.rfind('.');
  if (last == std::string::npos || last == 0)
    return std::nullopt;
  std::string_view tail = std::string_view(name).substr(last + 1);
  if (isAddress(tail))
    return std::string(tail);
  size_t prev = name.rfind('.', last - 1);
  if (prev == std::string::npos || prev == 0)
    return std::nullopt;
  std::string_view mid =
      std::string_view(name).substr(prev + 1, last - prev - 1);
  if (isAddress(mid))
    return std::string(mid);
  return std::nullopt;
}

/// Names of the regular entries in the root directory.
Expected<std::vector<std::string>> listDirectory(const ArtifactRoot &root) {
  int fd = ::openat(root.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return makeError(root.path(), ": cannot list: ", std::strerror(errno));
  DIR *d = ::fdopendir(fd);
  if (!d) {
    int err = errno;
    ::close(fd);
    return makeError(root.path(), ": cannot list: ", std::strerror(err));
  }
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent *e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..")
      names.push_back(std::move(n));
  }
  int err = errno;
  ::closedir(d);
  if (err != 0)
    return makeError(root.path(), ": cannot list: ", std::strerror(err));
  std::sort(names.begin(), names.end());
  return names;
}

/// Takes the writer lock on the directory (released when `root` closes,
/// including when the process dies).
Status lockDirectory(const ArtifactRoot &root) {
  while (::flock(root.fd(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR)
      continue;
    if (errno == EWOULDBLOCK)
      return makeError(root.path(), ": another artifact writer holds the "
                                    "directory's lock");
    return makeError(root.path(), ": cannot lock: ", std::strerror(errno));
  }
  return Status::ok();
}

/// Removes every temporary in the root (the lock is held: no writer is
/// active, so each one is a killed writer's leftover).
std::vector<std::string> removeTemporaries(const ArtifactRoot &root) {
  std::vector<std::string> removed;
  auto names = listDirectory(root);
  if (!names)
    return removed;
  for (const std::string &n : *names) {
    if (n.rfind(kTempPrefix, 0) != 0)
      continue;
    struct stat st;
    if (::fstatat(root.fd(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        S_ISDIR(st.st_mode))
      continue;
    if (::unlinkat(root.fd(), n.c_str(), 0) == 0)
      removed.push_back(n);
  }
  return removed;
}

/// One file on its way into the artifact.
struct Output {
  std::string name; ///< as added
  FileRole role = FileRole::Shard;
  const SafetensorsWriter *shardWriter = nullptr;
  const std::vector<TensorData> *sources = nullptr; ///< shard payloads
  const std::vector<uint8_t> *blob = nullptr;       ///< non-shard bytes
  std::string tempPath, finalPath;
  uint64_t bytes = 0, device = 0, inode = 0;
  std::string sha256;
  std::optional<ChunkDigests> chunks; ///< for files of more than one chunk
  bool tempExists = false;
  bool renamed = false;
  bool ownsFinal = false; ///< the final name is ours to remove on failure
};

/// The state of one write() call; rolls back unless committed.
class Transaction {
public:
  Transaction(ArtifactRoot root, const WriteOptions &options)
      : root(std::move(root)), options(options) {}
  ~Transaction() {
    if (!published)
      rollback();
  }

  Status step(WriteStep s, const std::string &file, const std::string &path) {
    if (!options.hook)
      return Status::ok();
    if (Status st = options.hook(WriteEvent{s, file, path}); !st)
      return makeError(root.display(path.empty() ? file : path), ": ",
                       toString(s), ": ", st.message());
    return Status::ok();
  }

  Status fsyncRoot(WriteStep s) {
    QTENSOR_TRY(step(s, "", "."));
    if (::fsync(root.fd()) != 0)
      return makeError(root.path(), ": fsync of the directory failed: ",
                       std::strerror(errno));
    return Status::ok();
  }

  Status createTemp(Output &o) {
    QTENSOR_TRY(step(WriteStep::CreateTemp, o.name, ""));
    for (int attempt = 0; attempt < 16; ++attempt) {
      std::string temp = std::string(kTempPrefix) + std::to_string(::getpid()) +
                         "-" + randomHex() + "-" + o.name;
      int fd =
          ::openat(root.fd(), temp.c_str(),
                   O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd >= 0) {
        o.tempPath = temp;
        o.tempExists = true;
        current.reset(fd);
        return Status::ok();
      }
      if (errno != EEXIST)
        return makeError(root.display(temp),
                         ": cannot create: ", std::strerror(errno));
    }
    return makeError(root.path(), ": cannot find a free temporary name for ",
                     o.name);
  }

  Status writeTemp(Output &o) {
    QTENSOR_TRY(step(WriteStep::WriteTemp, o.name, o.tempPath));
    std::string display = root.display(o.tempPath);
    if (o.shardWriter) {
      auto written = o.shardWriter->write(current.get(), display);
      if (!written)
        return written.error();
      o.bytes = *written;
      return Status::ok();
    }
    uint64_t offset = 0;
    QTENSOR_TRY(writeAll(current.get(), o.blob->data(), o.blob->size(), display,
                         offset));
    o.bytes = offset;
    return Status::ok();
  }

  Status syncTemp(Output &o) {
    QTENSOR_TRY(step(WriteStep::SyncTemp, o.name, o.tempPath));
    if (fileLayer().fsync(current.get()) != 0)
      return makeError(root.display(o.tempPath),
                       ": fsync failed: ", std::strerror(errno));
    return Status::ok();
  }

  /// Reopen what was written through the production path policy and
  /// reader, hash it and compare it with the sources. The file is hashed
  /// once, through the reopened mapping: the descriptor it was written
  /// through reads the same inode's pages, so hashing those too (as this
  /// writer once did) checked nothing more.
  Status verifyTemp(Output &o) {
    QTENSOR_TRY(step(WriteStep::VerifyTemp, o.name, o.tempPath));
    std::string display = root.display(o.tempPath);
    struct stat st;
    if (::fstat(current.get(), &st) != 0)
      return makeError(display, ": cannot stat: ", std::strerror(errno));
    o.device = static_cast<uint64_t>(st.st_dev);
    o.inode = static_cast<uint64_t>(st.st_ino);
    current.reset();

    auto opened = root.openFile(o.tempPath);
    if (!opened)
      return opened.error();
    if (opened->device != o.device || opened->inode != o.inode)
      return makeError(display, ": reopened a different file than the one "
                                "written");
    if (opened->size != o.bytes)
      return makeError(display, ": reopened with ", opened->size,
                       " bytes, but ", o.bytes, " were written");
    auto mapped = MappedFile::fromDescriptor(opened->fd.release(), display);
    if (!mapped)
      return mapped.error();
    // The mapping hashed whole again, and in chunks beside it on the other
    // threads when the file is long enough to list them.
    uint64_t chunkBytes = options.digestChunkBytes;
    bool chunked = chunkBytes != 0 && mapped->size() > chunkBytes;
    PieceDigests digests;
    if (chunked) {
      QTENSOR_ASSIGN_OR_RETURN(digests,
                               sha256Pieces(mapped->data(), mapped->size(),
                                            chunkBytes, /*whole=*/true));
    } else {
      QTENSOR_ASSIGN_OR_RETURN(
          digests.whole, sha256HexOfMapped(mapped->data(), mapped->size()));
    }
    if (mapped->size() != o.bytes)
      return makeError(display, ": the reopened mapping holds ", mapped->size(),
                       " bytes, but ", o.bytes, " were written");
    o.sha256 = digests.whole;
    if (chunked)
      o.chunks = ChunkDigests{chunkBytes, std::move(digests.pieces)};
    if (o.blob) {
      if (mapped->size() != o.blob->size() ||
          (mapped->size() > 0 &&
           std::memcmp(mapped->data(), o.blob->data(), mapped->size()) != 0))
        return makeError(display, ": the reopened bytes differ from the "
                                  "source bytes");
    } else {
      auto shard =
          SafetensorsFile::fromMappedFile(mapped.take(), options.limits);
      if (!shard)
        return makeError("reopen check: ", shard.message());
      QTENSOR_TRY(checkShard(*shard, *o.sources));
    }
    if (options.contentAddressedNames)
      o.finalPath = contentAddressedName(o.name, o.sha256);
    else
      o.finalPath = o.name;
    return Status::ok();
  }

  /// Inventory (exactly the declared names, dtypes, shapes) and bytes.
  static Status checkShard(const SafetensorsFile &shard,
                           const std::vector<TensorData> &sources) {
    if (shard.size() != sources.size())
      return makeError(shard.path(), ": reopened with ", shard.size(),
                       " tensors, but ", sources.size(), " were written");
    for (const TensorData &t : sources) {
      const safetensors::TensorView *v = shard.find(t.name);
      if (!v)
        return makeError(shard.path(), ": tensor \"", t.name,
                         "\" is missing after reopen");
      if (v->dtype != t.dtype || v->shape != t.shape)
        return makeError(shard.path(), ": tensor \"", t.name, "\" reopened as ",
                         safetensors::dtypeName(v->dtype), " ",
                         shapeToString(v->shape), ", written as ",
                         safetensors::dtypeName(t.dtype), " ",
                         shapeToString(t.shape));
      bool same = v->byteSize() == t.size;
      if (same && t.fill) {
        // What is published must be what the caller hashed, though the
        // writer never held it whole.
        QTENSOR_ASSIGN_OR_RETURN(std::string hex,
                                 sha256HexOfMapped(v->data, v->byteSize()));
        if (hex != t.sha256)
          return makeError(shard.path(), ": tensor \"", t.name,
                           "\": the filled bytes (file offset ",
                           v->absoluteOffset(), ") hash to ", hex, ", but ",
                           t.sha256, " was declared");
      } else if (same && t.size > 0) {
        same = std::memcmp(v->data, t.data, t.size) == 0;
        releaseMappedPages(v->data, v->byteSize());
      }
      if (!same)
        return makeError(shard.path(), ": tensor \"", t.name,
                         "\": the reopened payload (file offset ",
                         v->absoluteOffset(),
                         ") differs from the source bytes");
    }
    return Status::ok();
  }

  /// Refuses a final name that would change a file the previous manifest
  /// references; decides which final names are ours to remove on failure.
  Status planRename(Output &o, const std::optional<Manifest> &previous) {
    const FileEntry *old = previous ? previous->findFile(o.finalPath) : nullptr;
    if (old && old->sha256 != o.sha256)
      return makeError(root.display(o.finalPath),
                       ": the current manifest references this name with "
                       "SHA-256 ",
                       old->sha256, "; replacing it with different bytes (",
                       o.sha256,
                       ") before the new manifest is published would break "
                       "the current artifact (use content-addressed names or "
                       "a new directory)");
    struct stat st;
    if (::fstatat(root.fd(), o.finalPath.c_str(), &st, AT_SYMLINK_NOFOLLOW) ==
        0) {
      if (S_ISDIR(st.st_mode))
        return makeError(root.display(o.finalPath),
                         ": is a directory; cannot publish a file there");
      // A file the current manifest does not reference is not ours to
      // replace (a user's file, or one of an artifact this build cannot
      // read), unless it already holds exactly these bytes: the leftover of
      // an interrupted write of the same content.
      if (!old && !holdsBytes(o.finalPath, st, o.sha256))
        return makeError(root.display(o.finalPath),
                         ": already exists and the current manifest does not "
                         "reference it; refusing to replace a file this "
                         "writer does not own");
    }
    // A name the previous manifest references holds exactly these bytes
    // (same SHA-256): replacing it is invisible to the previous artifact and
    // it must survive a rollback. Any other name is ours.
    o.ownsFinal = old == nullptr;
    return Status::ok();
  }

  /// Whether `name` (already stat'ed as `st`) is a regular file whose
  /// SHA-256 is `sha256`.
  bool holdsBytes(const std::string &name, const struct stat &st,
                  const std::string &sha256) {
    if (!S_ISREG(st.st_mode))
      return false;
    auto mapped =
        root.openVerified(name, static_cast<uint64_t>(st.st_size), sha256);
    return static_cast<bool>(mapped);
  }

  Status renameFile(Output &o) {
    QTENSOR_TRY(step(WriteStep::RenameFile, o.name, o.finalPath));
    if (::renameat(root.fd(), o.tempPath.c_str(), root.fd(),
                   o.finalPath.c_str()) != 0)
      return makeError(root.display(o.tempPath), ": cannot rename to ",
                       o.finalPath, ": ", std::strerror(errno));
    o.tempExists = false;
    o.renamed = true;
    return Status::ok();
  }

  Status writeManifest(const std::string &text) {
    QTENSOR_TRY(step(WriteStep::WriteManifest, kManifestFileName, ""));
    for (int attempt = 0; attempt < 16 && manifestTemp.empty(); ++attempt) {
      std::string temp = std::string(kTempPrefix) + std::to_string(::getpid()) +
                         "-" + randomHex() + "-" + kManifestFileName;
      int fd =
          ::openat(root.fd(), temp.c_str(),
                   O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd >= 0) {
        manifestTemp = temp;
        current.reset(fd);
      } else if (errno != EEXIST) {
        return makeError(root.display(temp),
                         ": cannot create: ", std::strerror(errno));
      }
    }
    if (manifestTemp.empty())
      return makeError(root.path(), ": cannot find a free temporary name for "
                                    "the manifest");
    uint64_t offset = 0;
    QTENSOR_TRY(writeAll(current.get(),
                         reinterpret_cast<const uint8_t *>(text.data()),
                         text.size(), root.display(manifestTemp), offset));
    QTENSOR_TRY(step(WriteStep::SyncManifest, kManifestFileName, manifestTemp));
    if (fileLayer().fsync(current.get()) != 0)
      return makeError(root.display(manifestTemp),
                       ": fsync failed: ", std::strerror(errno));
    current.reset();
    return Status::ok();
  }

  /// The manifest read back through the production parser must be the
  /// manifest meant, and every final name must still be the verified inode.
  Status verifyManifest(const Manifest &expected) {
    QTENSOR_TRY(
        step(WriteStep::VerifyManifest, kManifestFileName, manifestTemp));
    std::string display = root.display(manifestTemp);
    auto opened = root.openFile(manifestTemp);
    if (!opened)
      return opened.error();
    if (opened->size > kMaxManifestBytes)
      return makeError(display, ": larger than the manifest limit");
    std::string text(static_cast<size_t>(opened->size), '\0');
    QTENSOR_TRY(readAll(opened->fd.get(),
                        reinterpret_cast<uint8_t *>(text.data()), text.size(),
                        0, display + " (read back)"));
    auto parsed = parseManifest(text, display);
    if (!parsed)
      return makeError("reopen check: ", parsed.message());
    if (*parsed != expected)
      return makeError(display, ": the manifest read back differs from the "
                                "one written");
    for (const Output &o : outputs) {
      struct stat st;
      if (::fstatat(root.fd(), o.finalPath.c_str(), &st, AT_SYMLINK_NOFOLLOW) !=
              0 ||
          !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_ino) != o.inode ||
          static_cast<uint64_t>(st.st_dev) != o.device ||
          static_cast<uint64_t>(st.st_size) != o.bytes)
        return makeError(root.display(o.finalPath),
                         ": is no longer the file that was written and "
                         "verified");
    }
    return Status::ok();
  }

  Status publish() {
    QTENSOR_TRY(
        step(WriteStep::PublishManifest, kManifestFileName, kManifestFileName));
    if (options.beforePublish)
      options.beforePublish();
    if (::renameat(root.fd(), manifestTemp.c_str(), root.fd(),
                   kManifestFileName) != 0)
      return makeError(root.display(manifestTemp), ": cannot publish as ",
                       kManifestFileName, ": ", std::strerror(errno));
    published = true;
    manifestTemp.clear();
    if (options.afterPublish)
      options.afterPublish();
    return Status::ok();
  }

  /// Removes a file the previous manifest referenced (after the publish).
  Status collect(const std::string &path) {
    QTENSOR_TRY(step(WriteStep::CollectGarbage, path, path));
    auto parent = root.openParent(path);
    if (!parent)
      return parent.error();
    auto &[dir, leaf] = *parent;
    struct stat st;
    if (::fstatat(dir.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return errno == ENOENT
                 ? Status::ok()
                 : Status(makeError(root.display(path),
                                    ": cannot stat: ", std::strerror(errno)));
    if (S_ISDIR(st.st_mode))
      return makeError(root.display(path), ": is a directory; not removed");
    if (::unlinkat(dir.get(), leaf.c_str(), 0) != 0 && errno != ENOENT)
      return makeError(root.display(path),
                       ": cannot remove: ", std::strerror(errno));
    return Status::ok();
  }

  void rollback() {
    current.reset();
    for (const Output &o : outputs) {
      if (o.tempExists)
        ::unlinkat(root.fd(), o.tempPath.c_str(), 0);
      if (o.renamed && o.ownsFinal)
        ::unlinkat(root.fd(), o.finalPath.c_str(), 0);
    }
    if (!manifestTemp.empty())
      ::unlinkat(root.fd(), manifestTemp.c_str(), 0);
    (void)::fsync(root.fd());
  }

  ArtifactRoot root;
  const WriteOptions &options;
  std::vector<Output> outputs;
  FileDescriptor current; ///< the file being written
  std::string manifestTemp;
  bool published = false;
};

} // namespace

//===----------------------------------------------------------------------===//
// write
//===----------------------------------------------------------------------===//

Expected<WriteResult> ArtifactWriter::write(const std::string &dir,
                                            const WriteOptions &options) const {
  // Everything that can be checked without touching the disk comes first,
  // so a bad request leaves no trace.
  if (!base.files.empty() || !base.tensors.empty())
    return makeError("artifact writer: the base manifest must not list files "
                     "or tensors (the writer fills them)");
  if (shards.empty() && blobs.empty())
    return makeError("artifact writer: nothing to write (no tensors, no "
                     "files)");
  Manifest provisional = base;
  const std::string placeholder(64, '0');
  for (const Shard &s : shards)
    provisional.files.push_back(
        FileEntry{s.name, 0, placeholder, FileRole::Shard});
  for (const Blob &b : blobs)
    provisional.files.push_back(FileEntry{b.name, 0, placeholder, b.role});
  provisional.tensors = tensors;
  if (Status s = validateManifest(provisional); !s)
    return makeError("artifact writer: ", s.message());

  std::vector<SafetensorsWriter> shardWriters;
  shardWriters.reserve(shards.size());
  for (const Shard &s : shards) {
    SafetensorsWriter::Options wo;
    wo.bufferAlignment = options.bufferAlignment;
    wo.limits = options.limits;
    SafetensorsWriter &w = shardWriters.emplace_back(wo);
    for (const TensorData &t : s.tensors) {
      Status st = Status::ok();
      if (t.fill) {
        // The filled bytes must be the ones declared: checkShard hashes
        // them in the reopened file, before anything is published.
        st = w.addTensorFill(t.name, t.dtype, t.shape, t.size, t.fill);
      } else {
        st = w.addTensorRef(t.name, t.dtype, t.shape, t.data, t.size);
      }
      if (!st)
        return makeError("artifact writer: shard \"", s.name,
                         "\": ", st.message());
    }
    if (auto header = w.header(); !header)
      return makeError("artifact writer: shard \"", s.name,
                       "\": ", header.message());
  }

  // OpenDirectory: create one level, open, lock, sweep stale temporaries.
  if (options.hook)
    if (Status st = options.hook(WriteEvent{WriteStep::OpenDirectory, "", "."});
        !st)
      return makeError(dir, ": ", toString(WriteStep::OpenDirectory), ": ",
                       st.message());
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return makeError(
        dir, ": cannot create the artifact directory: ", std::strerror(errno));
  auto root = ArtifactRoot::open(dir);
  if (!root)
    return root.error();
  QTENSOR_TRY(lockDirectory(*root));
  (void)removeTemporaries(*root);

  Transaction tx(root.take(), options);
  QTENSOR_TRY(
      tx.step(WriteStep::ReadPrevious, kManifestFileName, kManifestFileName));
  // A manifest this build cannot read (a newer schema, corruption) may still
  // be someone's artifact: refuse rather than write over files it might
  // reference. No manifest at all protects nothing.
  std::optional<Manifest> previous;
  auto read = readManifest(tx.root);
  if (!read)
    return makeError(read.message(), "; refusing to write over an artifact "
                                     "this build cannot read (remove it or "
                                     "use another directory)");
  if (*read)
    previous = std::move(**read);

  for (size_t i = 0; i < shards.size(); ++i) {
    Output o;
    o.name = shards[i].name;
    o.role = FileRole::Shard;
    o.shardWriter = &shardWriters[i];
    o.sources = &shards[i].tensors;
    tx.outputs.push_back(std::move(o));
  }
  for (const Blob &b : blobs) {
    Output o;
    o.name = b.name;
    o.role = b.role;
    o.blob = &b.bytes;
    tx.outputs.push_back(std::move(o));
  }

  for (Output &o : tx.outputs) {
    QTENSOR_TRY(tx.createTemp(o));
    QTENSOR_TRY(tx.writeTemp(o));
    QTENSOR_TRY(tx.syncTemp(o));
    QTENSOR_TRY(tx.verifyTemp(o));
  }
  for (Output &o : tx.outputs)
    QTENSOR_TRY(tx.planRename(o, previous));
  for (Output &o : tx.outputs)
    QTENSOR_TRY(tx.renameFile(o));
  QTENSOR_TRY(tx.fsyncRoot(WriteStep::SyncDirectory));

  // The manifest, with final names in place of the added ones.
  std::map<std::string, const Output *> byName;
  for (const Output &o : tx.outputs)
    byName[o.name] = &o;
  WriteResult result;
  Manifest &m = result.manifest;
  m = base;
  for (const Output &o : tx.outputs)
    m.files.push_back(
        FileEntry{o.finalPath, o.bytes, o.sha256, o.role, o.chunks});
  m.tensors = tensors;
  for (TensorEntry &t : m.tensors)
    t.file = byName.at(t.file)->finalPath;
  for (KernelEntry &k : m.kernels)
    if (k.file) {
      auto it = byName.find(*k.file);
      if (it != byName.end())
        k.file = it->second->finalPath;
    }
  if (Status s = validateManifest(m); !s)
    return makeError("artifact writer: ", s.message());
  auto text = serializeManifest(m);
  if (!text)
    return makeError("artifact writer: ", text.message());
  QTENSOR_TRY(tx.writeManifest(*text));
  QTENSOR_TRY(tx.verifyManifest(m));
  QTENSOR_TRY(tx.publish());

  // Published: the new artifact is complete from here on.
  if (Status s = tx.fsyncRoot(WriteStep::SyncPublished); !s)
    return makeError(s.message(), " (the new manifest was published but may "
                                  "not be durable)");
  if (previous) {
    std::set<std::string> keep;
    for (const FileEntry &f : m.files)
      keep.insert(f.path);
    for (const FileEntry &f : previous->files) {
      if (keep.count(f.path))
        continue;
      if (Status s = tx.collect(f.path); !s)
        result.warnings.push_back(s.message());
      else
        result.removed.push_back(f.path);
    }
    if (!result.removed.empty())
      (void)::fsync(tx.root.fd());
  }
  return result;
}

//===----------------------------------------------------------------------===//
// removeStaleFiles
//===----------------------------------------------------------------------===//

Expected<std::vector<std::string>>
artifact::removeStaleFiles(const std::string &dir, bool keepOrphans) {
  auto root = ArtifactRoot::open(dir);
  if (!root)
    return root.error();
  QTENSOR_TRY(lockDirectory(*root));
  std::vector<std::string> removed = removeTemporaries(*root);
  if (keepOrphans)
    return removed;
  // Which files are referenced? Without a readable manifest nobody can
  // tell, and orphans are kept.
  auto current = readManifest(*root);
  if (!current)
    return removed;
  std::set<std::string> referenced;
  if (*current)
    for (const FileEntry &f : (*current)->files)
      referenced.insert(f.path);
  auto names = listDirectory(*root);
  if (!names)
    return names.error();
  for (const std::string &n : *names) {
    if (n == kManifestFileName || referenced.count(n))
      continue;
    auto address = contentAddressOf(n);
    if (!address)
      continue;
    // Only a file whose bytes carry the address its name claims was written
    // by a content-addressing writer; anything else is not ours to remove.
    auto opened = root->openFile(n, OpenPolicy{true});
    if (!opened)
      continue;
    auto mapped = MappedFile::fromDescriptor(opened->fd.release(), n);
    if (!mapped)
      continue;
    auto sha = sha256HexOfMapped(mapped->data(), mapped->size());
    if (!sha || sha->compare(0, kAddressDigits, *address) != 0)
      continue;
    if (::unlinkat(root->fd(), n.c_str(), 0) == 0)
      removed.push_back(n);
  }
  return removed;
}
