//===- GGMLSpellings.h - ggml block types as affine descriptors -*- C++ -*-===//
//
// The one table of how a ggml block encoding (the `ggml_block` layout's
// `encoding`, ggml's type name in lower case) spells as an affine
// descriptor: the GGUF reader describes tensors with it
// (Formats/GGUFDescriptor.h) and admission checks stored ggml_block layouts
// against it (Kernels/Admission.h). A K-quant's scales (and mins) are the
// exact f32 products of its two stored levels, which its nested qparams
// keep as codes under f16 super-block scales (NestedQParams). IQ4_NL and
// IQ4_XS codes index ggml's kvalues_iq4nl (Codebook::IQ4NL); IQ4_XS's
// scales are signed 6-bit codes under an f16 d per 256, like Q3_K's.
// MXFP4 and NVFP4 codes index E2M1 (Codebook::E2M1) under one-byte float
// scales (ScaleFormat: e8m0 per 32, unsigned e4m3 per 16).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_DESCRIPTOR_GGMLSPELLINGS_H
#define QTENSOR_DESCRIPTOR_GGMLSPELLINGS_H

#include "qtensor/Descriptor/Descriptor.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace qtensor {

struct GGMLAffineSpelling {
  const char *encoding; ///< "q4_0", ..., "q6_k"
  CodeType code;
  SignedEncoding signedEncoding;
  ZeroPointKind zeroPoint;
  int64_t group;         ///< elements per scale (and min)
  FloatType scaleType;   ///< f32: the exact product of two stored levels
  int64_t blockElements; ///< elements per stored block (the layout's tile)
  uint32_t blockBytes;
  std::optional<NestedQParams> nested; ///< the K-quants' second level
  Codebook codebook = Codebook::None;  ///< IQ4_NL, IQ4_XS: kvalues_iq4nl
  /// MXFP4: e8m0, NVFP4: ue4m3 (their doubled table with half the scale
  /// is the same value as e2m1 with the whole scale).
  ScaleFormat scaleFormat = ScaleFormat::Plain;
};

/// Every spelled encoding: q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k, q4_k,
/// q5_k, q6_k, iq4_nl, iq4_xs, mxfp4, nvfp4.
const std::vector<GGMLAffineSpelling> &ggmlAffineSpellings();

/// The spelling of `encoding`, or nullptr.
const GGMLAffineSpelling *findGGMLAffineSpelling(std::string_view encoding);

/// The affine descriptor `s` spells, groups along `axis` (a row's last
/// axis): what a GGUF tensor of that type is described as, and what an
/// exporter must find to write the type back.
AffineDescriptor spelledDescriptor(const GGMLAffineSpelling &s, int64_t axis);

} // namespace qtensor

#endif // QTENSOR_DESCRIPTOR_GGMLSPELLINGS_H
