//===- InspectArtifact.cpp - `qtc inspect` on an artifact directory -------===//
//
// Opens the artifact through the production reader (manifest, path safety,
// sizes, SHA-256, shard inventory) and reports one row per logical tensor.
// Quantized tensors dump through the reference decoder (Reconstruct.h).
//
//===----------------------------------------------------------------------===//

#include "InspectReport.h"

#include "qtensor/Descriptor/DescriptorJson.h"
#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Formats/Artifact.h"
#include "qtensor/Numerics/Packing.h"
#include "qtensor/Support/CheckedMath.h"

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
  switch (d.granularity) {
  case Granularity::PerTensor:
    return s + " per_tensor";
  case Granularity::PerAxis:
    return s + " per_axis" + std::to_string(d.axis);
  case Granularity::Group:
    return s + " group" + std::to_string(d.groupSize);
  }
  return s;
}
} // namespace

namespace qtensor::qtc {

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
  uint64_t bytes = 0;
  for (const artifact::FileEntry &f : m.files)
    bytes += f.bytes;
  report.summary["files"] = m.files.size();
  report.summary["file_bytes"] = bytes;
  report.summary["kernels"] = m.kernels.size();

  for (const artifact::TensorEntry &entry : m.tensors) {
    auto resolved = opened->tensor(entry.name);
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
    } else {
      const artifact::QuantizedTensor *q = entry.quantized();
      row.type = describe(q->logical);
      row.shape = q->logical.shape;
      row.descriptor = toJson(q->logical);
      row.absoluteOffset = resolved->codes->absoluteOffset();
      row.bytes = resolved->codes->byteSize() + resolved->scales->byteSize() +
                  (resolved->zeros ? resolved->zeros->byteSize() : 0);
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

  const QuantizedTensorDescriptor &t = resolved->entry->quantized()->logical;
  if (!t.layout.isLogical())
    return makeError(path, ": tensor \"", name, "\": layout \"",
                     t.layout.family, "\" has no reference unpacker in this "
                     "build; only \"logical\" layouts can be dumped");
  // Logical layout: row-major codes, each row (last dimension) starting on a
  // byte boundary, LSB-first inside a byte.
  int64_t cols = t.shape.empty() ? 1 : t.shape.back();
  std::vector<int64_t> leading(t.shape.begin(),
                               t.shape.empty() ? t.shape.end()
                                               : t.shape.end() - 1);
  auto rowCount = checkedElementCount(leading, uint64_t(INT64_MAX));
  if (!rowCount)
    return makeError(path, ": tensor \"", name, "\": row count of ",
                     shapeToString(t.shape), " overflows");
  int64_t rows = static_cast<int64_t>(*rowCount);
  const AffineDescriptor &d = t.descriptor;
  auto codes = unpackCodes(resolved->codes->data, resolved->codes->byteSize(),
                           rows, cols, d.code.bits, d.code.isSigned,
                           d.encoding, BitOrder::LsbFirst, RowAlignment::Byte);
  if (!codes)
    return makeError(path, ": tensor \"", name, "\": codes: ",
                     codes.message());
  auto scales = safetensors::toFloat64(*resolved->scales);
  if (!scales)
    return scales.error();
  std::vector<double> zeros;
  if (resolved->zeros) {
    auto z = safetensors::toFloat64(*resolved->zeros);
    if (!z)
      return z.error();
    zeros = z.take();
  }
  auto values = reconstructAffine(t, *codes, *scales, zeros);
  if (!values)
    return makeError(path, ": tensor \"", name, "\": ", values.message());
  return std::vector<float>(values->begin(), values->end());
}

} // namespace qtensor::qtc
