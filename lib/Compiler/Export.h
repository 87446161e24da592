//===- Export.h - Writing the compiled artifact -----------------*- C++ -*-===//
//
// Turns the compiled model into an artifact directory (DESIGN.md "Artifact"):
// per-rank shards of packed codes and qparams in each weight's selected
// layout, one shard of plain tensors (embeddings, norms, the head), the graph
// (.mlir), the dispatch trace, the kernels and the report, written by the
// transactional ArtifactWriter (manifest last). Per stored tensor it records
// the SHA-256 of its reconstruction, which `qtc verify` recomputes from the
// reopened files (parity level L2).
//
// The data path is streamed: each linear is read, quantized, sliced, packed
// and hashed, and its stored bytes are appended to a spool file in the
// scratch directory before the next linear is read; the writer then fills
// the shards from the spool one tensor at a time. Memory follows the largest
// linear, not the model.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_EXPORT_H
#define QTENSOR_LIB_COMPILER_EXPORT_H

#include "Checkpoint.h"
#include "Quantize.h"

#include "qtensor/Formats/ArtifactWriter.h"
#include "qtensor/Formats/DecoderProgram.h"
#include "qtensor/Formats/Manifest.h"
#include "qtensor/Support/Progress.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace qtensor::compiler {

/// How one weight is split over ranks (from `qtensor.placement`).
struct WeightPlacement {
  enum class Kind { Single, Column, Row, Replicated } kind = Kind::Single;
  std::vector<int64_t> bounds; ///< ranks + 1 entries along the sliced dim
  int64_t ranks() const {
    return bounds.empty() ? 1 : static_cast<int64_t>(bounds.size()) - 1;
  }
};

struct ExportLinear {
  const SourceLinear *source = nullptr;
  /// A linear's weight, or the embedding table kept as its checkpoint's
  /// codes (stored like a weight, bound to no op: Manifest.h TensorUse).
  artifact::TensorUse use = artifact::TensorUse::Linear;
  /// Holds `source` when it is not one of the checkpoint's linears (the
  /// embedding table), shared by copies of the input.
  std::shared_ptr<const SourceLinear> ownedSource;
  /// What describeLinear planned; the quantized weight must match it.
  QuantizedTensorDescriptor logical;
  WeightPlacement placement;
  LayoutDescriptor layout; ///< the stored (kernel) layout of every rank
  /// A mixed_2416 linear (--quant mixed2416): quantized by
  /// quantizeMixed2416 and stored as its streams, whole (`logical` and
  /// `layout` do not apply).
  std::optional<Mixed2416Descriptor> mixed;
};

/// The stored bytes of a staged export (Export.cpp).
struct StagedExport;

/// A non-shard file of the artifact.
struct ExportFile {
  std::string name;
  artifact::FileRole role;
  std::vector<uint8_t> bytes;
};

struct ExportInput {
  const Checkpoint *checkpoint = nullptr;
  QuantSpec spec; ///< how float weights are quantized
  /// Where the stored bytes are spooled between staging and writing.
  std::string scratchDir;
  std::vector<ExportLinear> linears;
  int64_t tp = 1;
  std::vector<ExportFile> files; ///< graph, trace, kernels, tokenizer
  std::vector<artifact::KernelEntry> kernels;
  std::vector<artifact::OpBinding> bindings;
  /// The decoder program; its file references are names in `files`,
  /// written as the names they are published under (program.json).
  std::optional<artifact::DecoderProgram> program;
  artifact::ModelIdentity model;
  artifact::QuantizationSpec quantization;
  artifact::Provenance provenance;
  /// Filled by exportArtifact: "tensors" (per stored tensor: digest, error,
  /// bits) and "ledger"; the caller's fields are kept.
  nlohmann::ordered_json report;
  /// Set by the first exportArtifact: the weights are quantized and packed
  /// once; a later call (the report published again) writes from the
  /// spool. Shared by copies of the input.
  std::shared_ptr<StagedExport> staged;
  /// Plain tensors of the checkpoint that are not stored (the embedding a
  /// tied head's codes replace), each with why; the report says so.
  std::map<std::string, std::string> notStored;
  /// Called just before and right after the manifest is published
  /// (WriteOptions).
  std::function<void()> beforePublish, afterPublish;
};

/// The name of rank `rank`'s slice of `name` in the manifest.
std::string rankTensorName(const std::string &name, int64_t rank,
                           int64_t ranks);

/// Writes the artifact into `dir`, quantizing and packing the weights on the
/// first call (progress counts the linears). The report (with what this
/// adds) is written as `report.json` and returned through `input.report`.
Expected<artifact::WriteResult> exportArtifact(ExportInput &input,
                                               const std::string &dir,
                                               ProgressSink &progress);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_EXPORT_H
