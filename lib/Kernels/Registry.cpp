//===- Registry.cpp - The built-in kernel capability table ----------------===//
//
// The registry is a table of structs, not a JSON file embedded at build
// time: the compiler type-checks every entry, the runtime gets it without a
// parse step that could fail at load, and the JSON spelling is still one
// call away (registryToJson) and round-trip tested. docs/kernels.md mirrors
// this table; keep both in step.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Kernels/Registry.h"

#include "qtensor/Numerics/ActivationQuant.h"
#include "qtensor/Numerics/KernelLayout.h"

#include <algorithm>
#include <set>

using namespace qtensor;
using namespace qtensor::kernels;

namespace {

LayoutId layoutOf(KernelLayoutKind kind) {
  KernelLayoutId id = kernelLayoutId(kind);
  return {std::string(id.family), id.version, std::string(id.encoding)};
}

const LayoutId kLogical{"logical", 1, "lsb_first"};
const LayoutId kGGMLQ4_0{"ggml_block", 1, "q4_0"};
const LayoutId kGGMLQ8_0{"ggml_block", 1, "q8_0"};

const CodeContract kSI4{4, true, SignedEncoding::TwosComplement};
const CodeContract kSI4Offset{4, true, SignedEncoding::OffsetBinary};
const CodeContract kUI4{4, false, SignedEncoding::TwosComplement};
const CodeContract kSI8{8, true, SignedEncoding::TwosComplement};
const CodeContract kUI8{8, false, SignedEncoding::TwosComplement};

/// Every affine code contract, for the full-dequant kernel.
std::vector<CodeContract> allAffineCodes() {
  std::vector<CodeContract> codes;
  for (unsigned bits : {2u, 3u, 4u, 5u, 6u, 8u}) {
    codes.push_back({bits, false, SignedEncoding::TwosComplement});
    codes.push_back({bits, true, SignedEncoding::TwosComplement});
    codes.push_back({bits, true, SignedEncoding::OffsetBinary});
  }
  return codes;
}

/// The W4A16 / W8A16 contract the generated kernels share: affine codes of
/// 4 or 8 bits, signed ones symmetric (ggml Q4_0's offset-binary si4
/// included: the layouts store every code offset binary anyway) and
/// unsigned ones with an integer zero-point; f16/bf16 scales in groups of
/// 32/64/128 along K or one per output channel; f16/bf16 activations, f32
/// accumulation.
KernelCapability affineA16(std::string id, std::string summary) {
  KernelCapability k;
  k.id = std::move(id);
  k.summary = std::move(summary);
  k.representations = {"affine"};
  k.codes = {kSI4, kSI4Offset, kUI4, kSI8, kUI8};
  k.signedZeroPoints = {ZeroPointKind::None};
  k.unsignedZeroPoints = {ZeroPointKind::Integer};
  k.scaleTypes = {FloatType::F16, FloatType::BF16};
  k.groupSizes = {32, 64, 128};
  k.perChannel = true;
  k.activations = {FloatType::F16, FloatType::BF16};
  k.accumulators = {FloatType::F32};
  k.outputs = {FloatType::F16, FloatType::BF16};
  k.topologies = {Topology::Single, Topology::Replicated, Topology::Column,
                  Topology::Row};
  k.epilogues = {Epilogue::None, Epilogue::Bias};
  return k;
}

/// What ggml's other block types keep, which every generated W4A16 kernel
/// but W8A8's reads: 2-, 3-, 5- and 6-bit codes one per byte field (Q2_K,
/// Q3_K, Q5_0, Q5_1, Q5_K, Q6_K), a float min (Q2_K, Q4_1, Q5_1, Q4_K,
/// Q5_K), f32 scales (the exact products of a K-quant's two scale levels,
/// or a float-code family's decoded scales) and groups of 16 (Q2_K, Q3_K,
/// Q6_K, NVFP4).
void addKeptGGMLForms(KernelCapability &k) {
  for (unsigned bits : {2u, 3u, 5u, 6u}) {
    k.codes.push_back({bits, true, SignedEncoding::OffsetBinary});
    k.codes.push_back({bits, true, SignedEncoding::TwosComplement});
    k.codes.push_back({bits, false, SignedEncoding::TwosComplement});
  }
  k.unsignedZeroPoints.push_back(ZeroPointKind::Min);
  k.scaleTypes.push_back(FloatType::F32);
  k.groupSizes.insert(k.groupSizes.begin(), 16);
}

/// Decode GEMV (passes/Conversion/DecodeGemv.cpp): T = 1..16, one warp per
/// output row, 16-byte code chunks read with 128-bit loads from the
/// decode_gemv layout. Any N and K: N tails are a warp-uniform guard, the K
/// tail one masked load of X, and a chunk never crosses a group of
/// 32/64/128 (the last group may be short). Scales f16 or bf16 whatever the
/// activation; the output in the linear's type, f32 included (split-K
/// needs it); the bias added in f32 before the one rounding.
KernelCapability gemv(std::string id, std::string summary, Backend backend,
                      uint32_t minCapability) {
  KernelCapability k = affineA16(std::move(id), std::move(summary));
  k.phases = {Phase::Decode};
  k.backends = {backend};
  k.minCapability = minCapability;
  k.layout = layoutOf(KernelLayoutKind::DecodeGemv);
  k.outputs = {FloatType::F16, FloatType::BF16, FloatType::F32};
  // Codes that index a codebook (IQ4_NL, NF4, E2M1: selects in registers
  // instead of the magic-number conversion; E4M3: from its bits).
  k.codebooks = {Codebook::None, Codebook::IQ4NL, Codebook::NF4, Codebook::E2M1,
                 Codebook::E4M3};
  // Groups of 16 split a 32-code W4 chunk (NVFP4; no zero-point): each
  // half scaled on its own; of byte codes they are a whole chunk (Q6_K).
  // Admission checks the split against the tile. A min decodes each lane
  // to s * q + m before the dot.
  addKeptGGMLForms(k);
  k.tileN = 1;
  k.tileK = 1;
  k.tokens = {1, kMaxDecodeTokens};
  k.priority = 100;
  return k;
}

/// Tensor-core GEMM (passes/Conversion/PrefillMma.cpp): mma.sync m16n8k16
/// on B-fragment panels of the prefill_mma layout. Serves decode too (the
/// m16 tile padded, as Marlin does), below the GEMV in priority, so one
/// packed copy can serve both phases. Any T and N (tails guarded); K a
/// multiple of 8, because X is staged with 16-byte cp.async copies. Scales
/// f16, bf16 or f32 whatever the activation, applied per group in f32; the
/// output in the linear's type, f32 included; the bias added in f32 before
/// the one rounding.
KernelCapability mma(std::string id, std::string summary, Backend backend,
                     uint32_t minCapability) {
  KernelCapability k = affineA16(std::move(id), std::move(summary));
  k.phases = {Phase::Decode, Phase::Prefill};
  k.backends = {backend};
  k.minCapability = minCapability;
  k.layout = layoutOf(KernelLayoutKind::PrefillMma);
  k.outputs = {FloatType::F16, FloatType::BF16, FloatType::F32};
  // Byte fields in n32 panels; a min's product with each group's sum of x
  // comes from one more mma per m16 tile, against a B of ones; a group of
  // 16 is one k16 step.
  addKeptGGMLForms(k);
  // Codebooks whose values are exact in f16 and bf16 (IQ4_NL's integers,
  // E2M1, E4M3): the B fragment is the table value itself. NF4's values
  // are not, and stay with the GEMV.
  k.codebooks = {Codebook::None, Codebook::IQ4NL, Codebook::E2M1,
                 Codebook::E4M3};
  k.tileN = 1;
  k.tileK = 8;
  k.tokens = {1, std::nullopt};
  k.priority = 90;
  return k;
}

/// The CPU's own GEMV/GEMM (passes/Conversion/HostGemm.cpp): vector code
/// over the decode_gemv layout's rows for any T, so one packed copy serves
/// decode and prefill on the host, above the host twins (which replay GPU
/// lanes and stay the GPU kernels' parity oracles). Any N and K, the same
/// numeric contract as the GEMV.
KernelCapability hostGemm() {
  KernelCapability k = affineA16(
      "affine_gemm_host",
      "W4A16/W8A16 CPU GEMV/GEMM, vector code, row-split across threads");
  k.phases = {Phase::Decode, Phase::Prefill};
  k.backends = {Backend::Host};
  k.layout = layoutOf(KernelLayoutKind::DecodeGemv);
  k.outputs = {FloatType::F16, FloatType::BF16, FloatType::F32};
  k.tokens = {1, std::nullopt};
  k.priority = 110;
  k.rowSplit = true;
  // Groups of 16 as the GEMV takes them (whole chunks of byte codes;
  // halves of a W4 chunk with no zero-point, checked against the tile).
  addKeptGGMLForms(k);
  // Codes that index a table (IQ4_NL, NF4, E2M1: 4 bits; E4M3: 8 bits, its
  // value from its bits), looked up in registers.
  k.codebooks = {Codebook::None, Codebook::IQ4NL, Codebook::NF4, Codebook::E2M1,
                 Codebook::E4M3};
  return k;
}

/// The host GEMM with int8 activations (ggml's way on a CPU): at T = 1 it
/// quantizes X per 32 to int8 (Numerics/ActivationQuant.h) and multiplies
/// codes and activations as integers (pmaddwd; built for x86-64-v3 and
/// up, pmaddubsw), each chunk's sum scaled once. Signed codes, or
/// unsigned codes of at most 7 bits with an integer zero-point (GPTQ,
/// AWQ, `asym`: z times X's sums comes off the integer sums) or a min
/// (ggml Q4_1, Q4_K, Q5_K, Q2_K: the min meets X's dequantized sums); no
/// float zero-point or codebook; groups of whole chunks, K within its
/// stack row. Built for x86-64-v4-amx, its forms in groups of 16 or whole
/// 32s also run T > 1 on AMX int8 tiles, X quantized the same way at every
/// T (Kernels/HostInt8Tiles.h). Above the float-activation host GEMM unless
/// the compile keeps activations float.
KernelCapability hostGemmInt8Activations() {
  KernelCapability k = hostGemm();
  k.id = "affine_gemm_host_xq8";
  k.summary = "W2-W8 CPU GEMV with int8 activations per 32 at T = 1 "
              "(ggml Q8_0's rule), f32 GEMM at T > 1 (at x86-64-v4-amx, "
              "int8 AMX tiles), row-split";
  std::vector<CodeContract> codes;
  for (const CodeContract &c : k.codes)
    if (c.isSigned || c.bits <= 7)
      codes.push_back(c);
  k.codes = codes;
  k.unsignedZeroPoints = {ZeroPointKind::Integer, ZeroPointKind::Min};
  k.codebooks = {Codebook::None};
  // A row-parallel rank holds a slice of K, whose blocks would start at
  // its own offset: such a split keeps the float-activation kernel.
  k.topologies = {Topology::Single, Topology::Replicated, Topology::Column};
  k.priority = 120;
  k.activationBlock = kActivationBlock;
  k.maxK = kMaxQuantizedActivationRow;
  return k;
}

/// The W8A8 GEMV (passes/Conversion/W8A8Gemv.cpp, seed M8.1 0x05): its
/// own quantizer makes X int8 per token (i8 and a scale per row, or u8
/// with a zero-point too), then an integer GEMV over the decode_gemv W8
/// rows applies the zero-point correction terms per 16-code chunk. Each
/// entry point is built for one T (1..16); a prefill runs in chunks of 16
/// rows. K whole chunks (no padded code may enter the corrections), groups
/// a multiple of 16 or per channel. Admitted only for an op that asks for
/// per-token activations (`--quant w8a8`), which it then serves in both
/// phases: above every other kernel of its backend.
KernelCapability w8a8Gemv(std::string id, std::string summary, Backend backend,
                          uint32_t minCapability) {
  KernelCapability k;
  k.id = std::move(id);
  k.summary = std::move(summary);
  k.phases = {Phase::Decode};
  k.backends = {backend};
  k.minCapability = minCapability;
  k.representations = {"affine"};
  k.layout = layoutOf(KernelLayoutKind::DecodeGemv);
  k.codes = {kSI8, kUI8};
  k.signedZeroPoints = {ZeroPointKind::None};
  k.unsignedZeroPoints = {ZeroPointKind::Integer};
  k.scaleTypes = {FloatType::F16, FloatType::BF16, FloatType::F32};
  k.groupSizes = {16, 32, 64, 128, 256};
  k.perChannel = true;
  k.activations = {FloatType::F16, FloatType::BF16};
  k.accumulators = {FloatType::F32};
  k.outputs = {FloatType::F16, FloatType::BF16, FloatType::F32};
  k.topologies = {Topology::Single};
  k.epilogues = {Epilogue::None, Epilogue::Bias};
  k.tileN = 1;
  k.tileK = 16;
  k.tokens = {1, kMaxDecodeTokens};
  k.priority = 200;
  k.activationQuants = {ActivationQuant::PerTokenSym,
                        ActivationQuant::PerTokenAsym};
  k.chunkRows = kMaxDecodeTokens;
  return k;
}

/// Dequantize the whole weight with the reference decoder, then a dense
/// matmul: any affine descriptor, any stored layout, any shape. Admitted
/// only when the fallback policy allows it, and then counted.
KernelCapability fullDequant() {
  KernelCapability k;
  k.id = "full_dequant_linear";
  k.summary = "dequantize the whole weight, then a dense matmul (fallback)";
  k.phases = {Phase::Decode, Phase::Prefill};
  k.backends = {Backend::Cuda, Backend::Host};
  k.minCapability = 70;
  k.representations = {"affine"};
  k.codes = allAffineCodes();
  k.signedZeroPoints = {ZeroPointKind::None, ZeroPointKind::Integer,
                        ZeroPointKind::Float, ZeroPointKind::Min};
  k.unsignedZeroPoints = k.signedZeroPoints;
  k.codebooks = {Codebook::None, Codebook::IQ4NL, Codebook::NF4, Codebook::E2M1,
                 Codebook::E4M3};
  k.scaleTypes = {FloatType::F16, FloatType::BF16, FloatType::F32};
  k.anyGroupSize = true;
  k.perChannel = true;
  k.perTensor = true;
  k.actOrder = true;
  k.activations = {FloatType::F16, FloatType::BF16, FloatType::F32};
  k.accumulators = {FloatType::F32, FloatType::F16, FloatType::BF16};
  k.outputs = {FloatType::F16, FloatType::BF16, FloatType::F32};
  k.topologies = {Topology::Single, Topology::Replicated, Topology::Column,
                  Topology::Row};
  k.tokens = {1, std::nullopt};
  k.epilogues = {Epilogue::None, Epilogue::Bias};
  k.priority = 0;
  k.fullDequant = true;
  return k;
}

KernelRegistry makeBuiltinRegistry() {
  KernelRegistry r;
  LayoutId decode = layoutOf(KernelLayoutKind::DecodeGemv);
  LayoutId prefill = layoutOf(KernelLayoutKind::PrefillMma);
  // Tiles are what the packers round to (Numerics/KernelLayout.h): a GEMV
  // row is whole 16-byte chunks (128 / b codes); an mma panel is 256 / b
  // rows by k16.
  r.layouts = {
      {decode,
       "row-major, each row whole 16-byte chunks of codes for 128-bit loads "
       "(2-, 3-, 5- and 6-bit codes one per byte)",
       {2, 3, 4, 5, 6, 8},
       {1, 32},
       {1, 16}},
      {prefill,
       "mma.sync m16n8k16 B-fragment panels of 256/f rows by k16 (f the "
       "field: 4 for W4, 8 for byte codes)",
       {2, 3, 4, 5, 6, 8},
       {64, 16},
       {32, 16}},
  };
  // Our own logical weights are packed by the exporter; GGUF blocks (and a
  // weight already in the other kernel layout) are repacked at load, codes
  // unchanged.
  r.repackPaths = {
      {kLogical, decode, true},   {kLogical, prefill, true},
      {kGGMLQ4_0, decode, false}, {kGGMLQ4_0, prefill, false},
      {kGGMLQ8_0, decode, false}, {kGGMLQ8_0, prefill, false},
      {decode, prefill, false},   {prefill, decode, false},
  };
  r.kernels = {
      gemv("affine_gemv_decode_sm80",
           "W4A16/W8A16 decode GEMV, 128-bit loads, warp reduction",
           Backend::Cuda, 80),
      mma("affine_mma_prefill_sm80",
          "W4A16/W8A16 tensor-core GEMM, mma.sync m16n8k16 f16/bf16 -> f32",
          Backend::Cuda, 80),
      gemv("affine_gemv_decode_host",
           "host build of the decode GEMV (CI parity)", Backend::Host, 0),
      mma("affine_gemm_prefill_host",
          "host build of the tensor-core GEMM's tiling (CI parity)",
          Backend::Host, 0),
      hostGemmInt8Activations(),
      hostGemm(),
      fullDequant(),
      // Last, so every affine kernel keeps its place in the traces.
      w8a8Gemv("w8a8_gemv_decode_sm80",
               "W8A8 decode GEMV: per-token int8 activations, integer dot "
               "with zero-point corrections; prefill in chunks of 16",
               Backend::Cuda, 80),
      w8a8Gemv("w8a8_gemv_decode_host",
               "host build of the W8A8 GEMV and its quantizer (CI parity)",
               Backend::Host, 0),
  };
  return r;
}

} // namespace

const KernelRegistry &kernels::builtinRegistry() {
  static const KernelRegistry registry = makeBuiltinRegistry();
  return registry;
}

//===----------------------------------------------------------------------===//
// Invariants
//===----------------------------------------------------------------------===//

namespace {
template <typename T> bool contains(const std::vector<T> &v, const T &x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

Status verifyKernel(const KernelRegistry &r, const KernelCapability &k) {
  std::string what = "kernel '" + k.id + "'";
  auto empty = [&](const char *field) {
    return makeError(what, ": ", field, " must not be empty");
  };
  if (k.summary.empty())
    return empty("summary");
  if (k.phases.empty())
    return empty("phases");
  if (k.backends.empty())
    return empty("backends");
  if (k.representations.empty())
    return empty("representations");
  if (k.codes.empty())
    return empty("codes");
  // The parity checks quantize X by the one rule they know (its block).
  if (k.activationBlock != 0 &&
      (k.activationBlock != kActivationBlock || !k.maxK ||
       *k.maxK > kMaxQuantizedActivationRow))
    return makeError(what, ": activation_block ", k.activationBlock,
                     " must be 0 or ", kActivationBlock,
                     ", with max_k at most ", kMaxQuantizedActivationRow);
  if (k.signedZeroPoints.empty() && k.unsignedZeroPoints.empty())
    return empty("zero_points");
  for (const CodeContract &c : k.codes)
    if ((c.isSigned ? k.signedZeroPoints : k.unsignedZeroPoints).empty())
      return makeError(what, ": admits ", toString(c),
                       " but no zero-point "
                       "kind for ",
                       c.isSigned ? "signed" : "unsigned", " codes");
  if (k.codebooks.empty())
    return empty("codebooks");
  if (k.scaleTypes.empty())
    return empty("scales");
  if (k.activations.empty())
    return empty("activations");
  if (k.accumulators.empty())
    return empty("accumulators");
  if (k.outputs.empty())
    return empty("outputs");
  if (k.topologies.empty())
    return empty("topologies");
  if (k.epilogues.empty())
    return empty("epilogues");
  if (k.groupSizes.empty() && !k.anyGroupSize && !k.perChannel && !k.perTensor)
    return makeError(what, ": admits no scale granularity");
  for (int64_t g : k.groupSizes)
    if (g <= 0)
      return makeError(what, ": group size ", g, " must be positive");
  if (k.tileN <= 0 || k.tileK <= 0)
    return makeError(what, ": tiles must be positive, got N ", k.tileN, " K ",
                     k.tileK);
  if (k.tokens.min < 1 || (k.tokens.max && *k.tokens.max < k.tokens.min))
    return makeError(what, ": token range ", toString(k.tokens),
                     " must be non-empty and start at T >= 1");
  if (k.activationQuants.empty())
    return empty("activation_quants");
  // A chunked kernel covers T = 1..chunk_rows with its entries.
  if (k.chunkRows < 0 ||
      (k.chunkRows > 0 && (k.tokens.min != 1 || k.tokens.max != k.chunkRows)))
    return makeError(what, ": chunk_rows ", k.chunkRows,
                     " must be 0 or the token range's maximum, from T = 1");
  if (contains(k.backends, Backend::Cuda) && k.minCapability == 0)
    return makeError(what, ": a CUDA kernel needs a minimum capability");
  // The phases it claims are exactly those its token range reaches.
  for (Phase p : {Phase::Decode, Phase::Prefill}) {
    TokenRange range = phaseTokens(p);
    bool reaches = (!k.tokens.max || *k.tokens.max >= range.min) &&
                   (!range.max || k.tokens.min <= *range.max);
    bool claims = contains(k.phases, p);
    if (reaches != claims)
      return makeError(what, ": phases must list ", toString(p),
                       " exactly "
                       "when the token range ",
                       toString(k.tokens), " reaches it");
  }
  // Wildcards (any layout, any group size) are for the full-dequant kernel,
  // which decodes through the reference decoder.
  if (!k.fullDequant && (!k.layout || k.anyGroupSize))
    return makeError(what, ": only a full-dequant kernel may read any "
                           "layout or any group size");
  if (k.layout) {
    const KernelLayout *layout = r.findLayout(*k.layout);
    if (!layout)
      return makeError(what, ": layout ", toString(*k.layout),
                       " is not in the registry's layouts");
    for (const CodeContract &c : k.codes)
      if (!contains(layout->bits, c.bits))
        return makeError(what, ": admits ", toString(c), " but layout ",
                         toString(*k.layout), " cannot hold ", c.bits,
                         "-bit codes");
  }
  return Status::ok();
}
} // namespace

Status kernels::verifyRegistry(const KernelRegistry &r) {
  std::set<std::string> ids;
  for (const KernelCapability &k : r.kernels) {
    if (k.id.empty())
      return makeError("a kernel has an empty id");
    if (!ids.insert(k.id).second)
      return makeError("kernel id '", k.id, "' appears twice");
    QTENSOR_TRY(verifyKernel(r, k));
  }
  for (size_t i = 0; i < r.layouts.size(); ++i) {
    const KernelLayout &l = r.layouts[i];
    if (l.id.family.empty() || l.id.encoding.empty() || l.id.version == 0)
      return makeError("layout ", toString(l.id),
                       " needs a family, encoding and version >= 1");
    for (size_t j = 0; j < i; ++j)
      if (r.layouts[j].id == l.id)
        return makeError("layout ", toString(l.id), " appears twice");
    if (l.bits.empty())
      return makeError("layout ", toString(l.id), " holds no code width");
    for (unsigned b : l.bits) {
      std::vector<int64_t> tile = l.tileFor(b);
      if (tile.size() != 2 || tile[0] <= 0 || tile[1] <= 0)
        return makeError("layout ", toString(l.id),
                         " needs a positive "
                         "[N, K] tile for ",
                         b, "-bit codes");
    }
  }
  for (const RepackPath &p : r.repackPaths) {
    if (!r.findLayout(p.to))
      return makeError("repack path ", toString(p.from), " -> ", toString(p.to),
                       " ends outside the registry's layouts");
    if (p.from == p.to)
      return makeError("repack path ", toString(p.from),
                       " -> itself is not a repack");
    if (p.atExport && p.from.family != "logical")
      return makeError("repack path ", toString(p.from), " -> ", toString(p.to),
                       ": only the logical layout is packed "
                       "at export");
  }
  return Status::ok();
}
