//===- GGUFExport.h - An artifact's model as a GGUF file --------*- C++ -*-===//
//
// `qtc export-gguf ART -o model.gguf`: the artifact's decoder program
// written as a llama.cpp GGUF file. Each tensor is named by its role in the
// program (token_embd, blk.N.attn_q, output_norm, ...), the architecture's
// hyperparameters are written under its prefix, and the tokenizer's
// metadata is copied when the artifact carries one.
//
// A quantized tensor is written in the ggml type whose decoding is its
// descriptor exactly, with its codes and qparams unchanged:
//
//   Q8_0  si8, symmetric, groups of 32 along K, f16 scales
//   Q4_0  si4, symmetric, groups of 32, f16 scales
//   Q4_1  ui4 with an f16 min, groups of 32, f16 scales
//   Q5_0  si5, symmetric, groups of 32, f16 scales
//   Q5_1  ui5 with an f16 min, groups of 32, f16 scales
//   Q2_K, Q3_K, Q4_K, Q5_K, Q6_K  their nested qparams
//         (GGUFDescriptor.h): the scale (and min) codes and f16 d (and
//         dmin) go back into the blocks
//
// Anything else (integer zero-points, groups of 64 or more, f32 scales
// without a second level, act-order) has no exact ggml type: it is refused with the reason, or
// with `dequantize` written as F32 values of the reference reconstruction
// (reported as such). A Hugging Face llama's q and k rows are permuted
// into ggml's RoPE pairing, as llama.cpp's converter does (rows move whole,
// with their qparams). Plain tensors are copied in their float dtype.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_GGUFEXPORT_H
#define QTENSOR_FORMATS_GGUFEXPORT_H

#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qtensor {

struct GGUFExportOptions {
  /// Write tensors with no exact ggml type as F32 reconstructions instead
  /// of refusing them.
  bool dequantize = false;
};

struct GGUFExportedTensor {
  std::string artifactName; ///< the artifact's tensor
  std::string ggufName;     ///< blk.0.attn_q.weight, ...
  std::string type;         ///< the ggml type written
  /// "codes kept", "plain", "dequantized: WHY", plus "rows permuted for
  /// ggml's RoPE" where that applies.
  std::string how;
};

struct GGUFExportResult {
  std::string architecture; ///< the GGUF's general.architecture
  std::vector<GGUFExportedTensor> tensors;
  bool tokenizer = false; ///< tokenizer metadata copied
  uint64_t bytes = 0;     ///< tensor data written
};

/// Exports the artifact in `artifactDir` to `outPath` (written atomically:
/// on any error nothing is left at `outPath`). Errors name the tensor and
/// why it has no ggml spelling, or why the artifact has no model to
/// export.
Expected<GGUFExportResult> exportGGUF(const std::string &artifactDir,
                                      const std::string &outPath,
                                      const GGUFExportOptions &options = {});

} // namespace qtensor

#endif // QTENSOR_FORMATS_GGUFEXPORT_H
