//===- InspectArtifact.cpp - An artifact directory, inspected -------------===//
//
// Opens the artifact through the production reader (manifest, path safety,
// sizes, SHA-256, shard inventory) and reports one row per logical tensor.
// Quantized tensors dump through the runtime's reference decoder, in any
// stored layout (Runtime/Reference.h).
//
//===----------------------------------------------------------------------===//

#include "InspectDetail.h"

#include "qtensor/Descriptor/DescriptorJson.h"
#include "qtensor/Formats/Artifact.h"
#include "qtensor/Formats/DecoderProgram.h"
#include "qtensor/Runtime/Reference.h"

using namespace qtensor;
using json = nlohmann::json;

namespace {
/// "affine ui4 group128" / "affine si8 per_axis0" for the type column.
std::string describe(const QuantizedTensorDescriptor &t) {
  const AffineDescriptor &d = t.descriptor;
  std::string s = "affine ";
  s += d.code.isSigned ? "si" : "ui";
  s += std::to_string(d.code.bits);
  if (d.zeroPoint != ZeroPointKind::None)
    s += std::string(" zp=") + toString(d.zeroPoint);
  if (d.codebook != Codebook::None) // "affine ui4 codebook=iq4_nl group32"
    s += std::string(" codebook=") + toString(d.codebook);
  if (d.scaleFormat != ScaleFormat::Plain) // "... codebook=e2m1 scales=e8m0"
    s += std::string(" scales=") + toString(d.scaleFormat);
  switch (d.granularity) {
  case Granularity::PerTensor:
    return s + " per_tensor";
  case Granularity::PerAxis:
    return s + " per_axis" + std::to_string(d.axis);
  case Granularity::Group:
    s += " group" + std::to_string(d.groupSize);
    if (d.nested) // e.g. "nested256 ui6/ui6 f16" for Q4_K
      s += " nested" + std::to_string(d.nested->superGroupSize) + " " +
           (d.nested->scaleCode.isSigned ? "si" : "ui") +
           std::to_string(d.nested->scaleCode.bits) +
           (d.nested->minCode
                ? std::string("/ui") + std::to_string(d.nested->minCode->bits)
                : std::string()) +
           " " + toString(d.nested->superType);
    return s;
  }
  return s;
}
/// The decoder program in one line: what `qtc run --prompt` would run.
std::string describeProgram(const artifact::Artifact &a) {
  for (const artifact::FileEntry &f : a.manifest().files) {
    if (f.role != artifact::FileRole::Program)
      continue;
    const MappedFile *file = a.file(f.path);
    if (!file)
      return "unreadable (" + f.path + " is not mapped)";
    auto p = artifact::parseProgram(
        {reinterpret_cast<const char *>(file->data()), size_t(file->size())},
        f.path);
    if (!p)
      return "invalid: " + p.message();
    const artifact::DecoderConfig &c = p->config;
    return c.architecture + ", " + std::to_string(c.layers) +
           " layers, hidden " + std::to_string(c.hidden) + ", heads " +
           std::to_string(c.heads) + "/" + std::to_string(c.kvHeads) + " x " +
           std::to_string(c.headDim) + ", vocab " + std::to_string(c.vocab) +
           ", context " + std::to_string(c.context) + ", " +
           toString(p->activation) + " activations, tokenizer " +
           (p->tokenizerFile ? "yes" : "none");
  }
  return "none (not runnable as a model; the report's program.none says why)";
}
} // namespace

namespace qtensor::inspect::detail {

void inspectArtifact(const std::string &path, InspectReport &report) {
  report.format = "qtensor-artifact";
  auto opened = artifact::openArtifact(path);
  if (!opened) {
    report.error = opened.message();
    return;
  }
  const artifact::Manifest &m = opened->manifest();
  json manifest = artifact::toJson(m);
  report.summary["versions"] = manifest["versions"];
  report.summary["model"] = manifest["model"];
  report.summary["quantization"] = m.quantization.family;
  report.summary["topology"] = manifest["topology"];
  // Provenance, one fact a line (seed M8.9 0x05: what made it, from what).
  report.summary["converter"] =
      m.provenance.converterName + " " + m.provenance.converterRevision;
  report.summary["created_by"] = m.provenance.createdBy;
  report.summary["source_sha256"] = m.provenance.sourceCheckpointSha256;
  report.summary["tokenizer_sha256"] =
      m.model.tokenizerSha256 ? *m.model.tokenizerSha256 : "none recorded";
  uint64_t bytes = 0;
  for (const artifact::FileEntry &f : m.files)
    bytes += f.bytes;
  report.summary["files"] = m.files.size();
  report.summary["file_bytes"] = bytes;
  report.summary["kernels"] = m.kernels.size();
  report.summary["program"] = describeProgram(*opened);

  for (const artifact::TensorEntry &entry : m.tensors) {
    auto resolved =
        opened->tensor(entry.name, artifact::Artifact::QParams::StoredOnly);
    if (!resolved) {
      report.error = resolved.message();
      return;
    }
    InspectedTensor row;
    row.name = entry.name;
    row.file = entry.file;
    if (const artifact::PlainTensor *plain = entry.plain()) {
      row.type = std::string(safetensors::dtypeName(plain->dtype));
      row.shape = plain->shape;
      row.absoluteOffset = resolved->data->absoluteOffset();
      row.bytes = resolved->data->byteSize();
    } else if (const artifact::Mixed2416Tensor *m = entry.mixed2416()) {
      const Mixed2416Descriptor &d = m->logical;
      row.type = std::string("mixed_2416 g") +
                 std::to_string(d.firstGroupSize) + " z" +
                 std::to_string(d.secondGroupSize) + " " + toString(d.sparse);
      row.shape = d.shape;
      row.descriptor = toJson(d);
      row.absoluteOffset =
          resolved->streams.at("precision_map")->absoluteOffset();
      row.bytes = 0;
      for (const safetensors::TensorView *v : resolved->storedViews())
        row.bytes += v->byteSize();
    } else {
      const artifact::QuantizedTensor *q = entry.quantized();
      row.type = describe(q->logical);
      if (q->use != artifact::TensorUse::Linear) // read by the program
        row.type += std::string(" (") + artifact::toString(q->use) + ")";
      row.shape = q->logical.shape;
      row.descriptor = toJson(q->logical);
      row.absoluteOffset = resolved->codes->absoluteOffset();
      row.bytes = 0;
      for (const safetensors::TensorView *v : resolved->storedViews())
        row.bytes += v->byteSize();
    }
    report.tensors.push_back(std::move(row));
  }
}

Expected<std::vector<float>> decodeArtifactTensor(const std::string &path,
                                                  const std::string &name) {
  auto opened = artifact::openArtifact(path);
  if (!opened)
    return opened.error();
  auto resolved = opened->tensor(name);
  if (!resolved)
    return resolved.error();
  if (resolved->data)
    return safetensors::toFloat32(*resolved->data);
  if (const artifact::Mixed2416Tensor *m = resolved->entry->mixed2416()) {
    auto streams =
        artifact::readMixed2416Streams(name, m->logical, resolved->streams);
    if (!streams)
      return makeError(path, ": ", streams.message());
    auto values = reconstructMixed2416(m->logical, *streams);
    if (!values)
      return makeError(path, ": tensor \"", name, "\": ", values.message());
    return std::vector<float>(values->begin(), values->end());
  }

  // The runtime's reference decoder: the packer's own inverse for any
  // stored layout, then the descriptor's reconstruction (Reference.h).
  auto values = runtime::reconstructWeight(*resolved->entry, *resolved->codes,
                                           *resolved->scales, resolved->zeros);
  if (!values)
    return makeError(path, ": tensor \"", name, "\": ", values.message());
  return std::vector<float>(values->begin(), values->end());
}

} // namespace qtensor::inspect::detail
