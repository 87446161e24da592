//===- Artifact.cpp - Opening a published artifact directory --------------===//

#include "qtensor/Formats/Artifact.h"

#include "qtensor/Support/FileIO.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace qtensor;
using namespace qtensor::artifact;
using safetensors::SafetensorsFile;
using safetensors::TensorView;

Expected<std::optional<Manifest>>
artifact::readManifest(const ArtifactRoot &root, const OpenPolicy &policy) {
  std::string name = root.display(kManifestFileName);
  struct stat st;
  if (::fstatat(root.fd(), kManifestFileName, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT)
      return std::optional<Manifest>();
    return makeError(name, ": cannot stat: ", std::strerror(errno));
  }
  auto opened = root.openFile(kManifestFileName, policy);
  if (!opened)
    return opened.error();
  // Bounded before anything is allocated (0x05A).
  if (opened->size > kMaxManifestBytes)
    return makeError(name, ": ", opened->size, " bytes exceed the limit of ",
                     kMaxManifestBytes);
  std::string text(static_cast<size_t>(opened->size), '\0');
  QTENSOR_TRY(readAll(opened->fd.get(),
                      reinterpret_cast<uint8_t *>(text.data()), text.size(), 0,
                      name));
  // One more byte would mean the file grew since fstat: reading a moving
  // manifest is not reading a published one.
  char extra;
  ssize_t more = fileLayer().pread(opened->fd.get(), &extra, 1, text.size());
  if (more > 0)
    return makeError(name, ": the file grew while it was read");
  auto m = parseManifest(text, name);
  if (!m)
    return m.error();
  return std::optional<Manifest>(m.take());
}

const SafetensorsFile *Artifact::shard(std::string_view path) const {
  auto it = shards.find(path);
  return it == shards.end() ? nullptr : &it->second;
}

const MappedFile *Artifact::file(std::string_view path) const {
  auto it = others.find(path);
  return it == others.end() ? nullptr : &it->second;
}

std::vector<const TensorView *> ResolvedTensor::storedViews() const {
  const bool decodedScales = decoded != nullptr;
  const bool decodedZeros = decodedScales && superScales;
  std::vector<const TensorView *> out;
  for (const TensorView *v :
       {data, codes, decodedScales ? scaleCodes : scales,
        decodedZeros ? minCodes : zeros, superScales, superZeros})
    if (v)
      out.push_back(v);
  for (const auto &[key, v] : streams)
    out.push_back(v);
  return out;
}

Expected<ResolvedTensor> Artifact::tensor(std::string_view name,
                                          QParams qparams) const {
  auto found = tensorIndex.find(name);
  const TensorEntry *entry =
      found == tensorIndex.end() ? nullptr : &man.tensors[found->second];
  if (!entry)
    return makeError(dir, ": no tensor \"", std::string(name),
                     "\" in the manifest");
  const SafetensorsFile *file = shard(entry->file);
  if (!file) // Impossible after openArtifact; kept as a guard.
    return makeError(dir, ": tensor \"", entry->name, "\": shard \"",
                     entry->file, "\" is not open");
  ResolvedTensor r;
  r.entry = entry;
  for (const auto &[role, stored] : entry->storedTensors()) {
    const TensorView *view = file->find(stored.tensor);
    if (!view)
      return makeError(file->path(), ": tensor \"", stored.tensor,
                       "\" is missing");
    std::string_view which = role;
    if (entry->mixed2416())
      r.streams[role] = view;
    else if (which == "data")
      r.data = view;
    else if (which == "codes")
      r.codes = view;
    else if (which == "scales")
      r.scales = view;
    else if (which == "zeros")
      r.zeros = view;
    else if (which == "super_scales")
      r.superScales = view;
    else
      r.superZeros = view;
  }
  const QuantizedTensor *q = entry->quantized();
  if (q && q->logical.descriptor.nested && qparams == QParams::Decoded) {
    if (!r.superScales)
      return makeError(file->path(), ": tensor \"", entry->name,
                       "\": its second-level scales are missing");
    QTENSOR_ASSIGN_OR_RETURN(
        r.decoded,
        decodeStoredNestedQParams(entry->name, q->logical, *r.scales,
                                  *r.superScales, r.zeros, r.superZeros));
    r.scaleCodes = r.scales;
    r.minCodes = r.zeros;
    r.scales = &r.decoded->scalesView;
    if (r.zeros)
      r.zeros = &r.decoded->minsView;
  } else if (q && q->logical.descriptor.scaleFormat != ScaleFormat::Plain &&
             qparams == QParams::Decoded) {
    QTENSOR_ASSIGN_OR_RETURN(
        r.decoded, decodeStoredScaleCodes(entry->name, q->logical, *r.scales));
    r.scaleCodes = r.scales;
    r.scales = &r.decoded->scalesView;
  }
  return r;
}

/// Checks that every physical tensor the manifest declares in `file` exists
/// with the declared dtype and shape; returns the declared names.
static Status checkInventory(const Manifest &m,
                             const std::vector<size_t> &entriesInFile,
                             const SafetensorsFile &shard,
                             const OpenOptions &options) {
  std::set<std::string, std::less<>> declared;
  for (size_t i : entriesInFile) {
    const TensorEntry &t = m.tensors[i];
    for (const auto &[role, stored] : t.storedTensors()) {
      declared.insert(stored.tensor);
      std::string what =
          std::string(role) == "data"
              ? "tensor \"" + t.name + "\""
              : std::string(role) + " of tensor \"" + t.name + "\"";
      const TensorView *view = shard.find(stored.tensor);
      if (!view)
        return makeError(shard.path(), ": tensor \"", stored.tensor, "\" (",
                         what, ", manifest.tensors[", i,
                         "]) is missing from the shard");
      if (view->dtype != stored.dtype)
        return makeError(shard.path(), ": tensor \"", stored.tensor, "\" (",
                         what, "): dtype is ",
                         safetensors::dtypeName(view->dtype),
                         " but the manifest declares ",
                         safetensors::dtypeName(stored.dtype));
      if (view->shape != stored.shape)
        return makeError(shard.path(), ": tensor \"", stored.tensor, "\" (",
                         what, "): shape is ", shapeToString(view->shape),
                         " but the manifest declares ",
                         shapeToString(stored.shape));
    }
  }
  if (!options.allowUndeclaredTensors)
    for (const TensorView &view : shard.tensors())
      if (!declared.count(view.name))
        return makeError(shard.path(), ": tensor \"", view.name,
                         "\" is not declared by any manifest tensor (strict "
                         "inventory)");
  return Status::ok();
}

Expected<Artifact> artifact::openArtifact(const std::string &dir,
                                          const OpenOptions &options) {
  auto root = ArtifactRoot::open(dir);
  if (!root)
    return root.error();
  auto manifest = readManifest(*root, options.files);
  if (!manifest)
    return manifest.error();
  if (!*manifest)
    return makeError(root->display(kManifestFileName),
                     ": missing (not an artifact directory, or its write was "
                     "never published)");
  Artifact a;
  a.dir = dir;
  a.man = std::move(**manifest);
  // Indexes built once keep opening linear in the manifest's size.
  std::map<std::string_view, std::vector<size_t>> entriesByFile;
  for (size_t i = 0; i < a.man.tensors.size(); ++i) {
    a.tensorIndex.emplace(a.man.tensors[i].name, i);
    entriesByFile[a.man.tensors[i].file].push_back(i);
  }
  std::vector<const FileEntry *> listed;
  for (const FileEntry &f : a.man.files)
    listed.push_back(&f);
  HoldOptions hold;
  hold.as = HoldAs::Mapping;
  hold.check = options.digests;
  hold.policy = options.files;
  std::vector<Expected<MappedFile>> held =
      holdVerifiedFiles(*root, listed, hold);
  for (size_t i = 0; i < listed.size(); ++i) {
    const FileEntry &f = *listed[i];
    Expected<MappedFile> &mapped = held[i];
    if (!mapped)
      return mapped.error();
    if (f.role != FileRole::Shard) {
      a.others.emplace(f.path, mapped.take());
      continue;
    }
    auto shard = SafetensorsFile::fromMappedFile(mapped.take(), options.limits);
    if (!shard)
      return shard.error();
    QTENSOR_TRY(checkInventory(a.man, entriesByFile[f.path], *shard, options));
    a.shards.emplace(f.path, shard.take());
  }
  return a;
}
