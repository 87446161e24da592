//===- Inspect.cpp - Any input, read and described ------------------------===//
//
// Every input goes through the same readers the runtime uses; inspect adds
// only format detection and rendering.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Inspect/Inspect.h"

#include "InspectDetail.h"

#include "qtensor/Descriptor/DescriptorJson.h"
#include "qtensor/Formats/GGUF.h"
#include "qtensor/Formats/GGUFDescriptor.h"
#include "qtensor/Formats/GGUFJson.h"
#include "qtensor/Formats/InputKind.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Formats/SafetensorsIndex.h"

using namespace qtensor;
using namespace qtensor::inspect;
using json = nlohmann::json;

namespace {

//===----------------------------------------------------------------------===//
// GGUF
//===----------------------------------------------------------------------===//

void inspectGGUF(const std::string &path, InspectReport &report) {
  report.format = "gguf";
  auto file = GGUFFile::open(path);
  if (!file) {
    report.error = file.message();
    return;
  }
  report.summary["version"] = file->version();
  report.summary["alignment"] = file->alignment();
  report.summary["data_offset"] = file->dataSectionOffset();
  report.summary["file_bytes"] = file->fileSize();
  for (const GGUFKeyValue &kv : file->metadata())
    report.metadata[std::string(kv.key)] = ggufValueToJson(kv.value);
  for (const GGUFTensorInfo &t : file->tensors()) {
    InspectedTensor row{std::string(t.name),
                        std::string(ggmlTypeName(t.type)),
                        t.ne,
                        t.absoluteOffset,
                        t.byteSize,
                        "",
                        nullptr};
    // Types with an affine spelling carry their descriptor (codes kept).
    if (auto desc = describeGGUFTensor(t); desc && desc->affine)
      row.descriptor = toJson(*desc->affine);
    report.tensors.push_back(std::move(row));
  }
}

//===----------------------------------------------------------------------===//
// safetensors and its index
//===----------------------------------------------------------------------===//

void addSafetensorsTensors(const safetensors::SafetensorsFile &file,
                           const std::string &fileLabel,
                           InspectReport &report) {
  for (const safetensors::TensorView &t : file.tensors())
    report.tensors.push_back(
        {t.name, std::string(safetensors::dtypeName(t.dtype)), t.shape,
         t.absoluteOffset(), t.byteSize(), fileLabel, nullptr});
}

void inspectSafetensors(const std::string &path, InspectReport &report) {
  report.format = "safetensors";
  auto file = safetensors::SafetensorsFile::open(path);
  if (!file) {
    report.error = file.message();
    return;
  }
  report.summary["header_bytes"] = file->headerLength();
  report.summary["buffer_bytes"] = file->bufferSize();
  report.summary["file_bytes"] = file->fileSize();
  for (const auto &[key, value] : file->metadata())
    report.metadata[key] = value;
  addSafetensorsTensors(*file, "", report);
}

void inspectIndex(const std::string &path, InspectReport &report) {
  report.format = "safetensors-index";
  auto index = safetensors::SafetensorsIndex::open(path);
  if (!index) {
    report.error = index.message();
    return;
  }
  report.summary["shards"] = index->shardNames();
  report.summary["total_size"] = index->totalSize();
  report.summary["tensor_bytes"] = index->tensorBytes();
  for (size_t i = 0; i < index->shards().size(); ++i)
    addSafetensorsTensors(index->shards()[i], index->shardNames()[i], report);
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

InspectReport qtensor::inspect::inspectPath(const std::string &path) {
  InspectReport report;
  report.path = path;
  auto kind = detectInputKind(path);
  if (!kind) {
    report.error = kind.message();
    return report;
  }
  switch (*kind) {
  case InputKind::ArtifactDirectory:
    detail::inspectArtifact(artifactDirectoryOf(path), report);
    break;
  case InputKind::Index:
    inspectIndex(path, report);
    break;
  case InputKind::GGUF:
    inspectGGUF(path, report);
    break;
  case InputKind::Safetensors:
    inspectSafetensors(path, report);
    break;
  }
  return report;
}

Expected<std::vector<float>>
qtensor::inspect::decodeTensorToF32(const std::string &path,
                                    const std::string &name) {
  QTENSOR_ASSIGN_OR_RETURN(InputKind kind, detectInputKind(path));
  switch (kind) {
  case InputKind::ArtifactDirectory:
    return detail::decodeArtifactTensor(artifactDirectoryOf(path), name);
  case InputKind::Index: {
    auto index = safetensors::SafetensorsIndex::open(path);
    if (!index)
      return index.error();
    const safetensors::TensorView *view = index->find(name);
    if (!view)
      return makeError(path, ": no tensor named \"", name, "\"");
    return safetensors::toFloat32(*view);
  }
  case InputKind::GGUF: {
    auto file = GGUFFile::open(path);
    if (!file)
      return file.error();
    const GGUFTensorInfo *info = file->findTensor(name);
    if (!info)
      return makeError(path, ": no tensor named \"", name, "\"");
    return file->decode(*info);
  }
  case InputKind::Safetensors: {
    auto file = safetensors::SafetensorsFile::open(path);
    if (!file)
      return file.error();
    auto view = file->get(name);
    if (!view)
      return view.error();
    return safetensors::toFloat32(**view);
  }
  }
  return makeError(path, ": unknown input");
}
