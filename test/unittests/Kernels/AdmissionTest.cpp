//===- AdmissionTest.cpp - Every clause of the admission predicate --------===//
//
// One test per clause: a signature that fails exactly that clause, and the
// reason it must give (seed M8.9 0x07A). The happy path is checked first so
// the single failing clause is the only reason.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Kernels/Admission.h"
#include "qtensor/Kernels/Registry.h"

#include <gtest/gtest.h>

using namespace qtensor;
using namespace qtensor::kernels;

namespace {

const KernelRegistry &registry() { return builtinRegistry(); }

const KernelCapability &kernel(const std::string &id) {
  const KernelCapability *k = registry().findKernel(id);
  EXPECT_NE(k, nullptr) << id;
  return *k;
}

/// W4 symmetric, groups of 128 along K, f16 everywhere, one rank.
OpSignature w4g128(int64_t n = 4096, int64_t k = 4096) {
  OpSignature sig;
  sig.descriptor.code = {4, true};
  sig.descriptor.granularity = Granularity::Group;
  sig.descriptor.axis = 1;
  sig.descriptor.groupSize = 128;
  sig.n = n;
  sig.k = k;
  sig.ranks = {{0, n, 0, k}};
  return sig;
}

Target target(const std::string &name) { return *parseTarget(name); }

PhaseQuery decode() { return {Phase::Decode, phaseTokens(Phase::Decode)}; }
PhaseQuery prefill() { return {Phase::Prefill, phaseTokens(Phase::Prefill)}; }

Verdict admitOn(const std::string &id, const OpSignature &sig,
                const PhaseQuery &phase = decode(),
                const std::string &device = "sm_90",
                FallbackPolicy policy = FallbackPolicy::Forbid) {
  return admit(registry(), kernel(id), sig, phase, target(device), policy);
}

std::vector<std::string> reasons(const Verdict &v) { return v.reasons; }
using Reasons = std::vector<std::string>;

constexpr const char *kGemv = "affine_gemv_decode_sm80";
constexpr const char *kMma = "affine_mma_prefill_sm80";
constexpr const char *kHostGemv = "affine_gemv_decode_host";
constexpr const char *kFallback = "full_dequant_linear";

} // namespace

TEST(Admission, HappyPathAdmits) {
  EXPECT_TRUE(admitOn(kGemv, w4g128()).accepted());
  EXPECT_TRUE(admitOn(kMma, w4g128(), prefill()).accepted());
  EXPECT_TRUE(admitOn(kMma, w4g128(), decode()).accepted());
  EXPECT_TRUE(admitOn(kHostGemv, w4g128(), decode(), "host").accepted());
  EXPECT_TRUE(
      admitOn(kFallback, w4g128(), decode(), "sm_80", FallbackPolicy::Allow)
          .accepted());
}

TEST(Admission, PolicyForbidsTheFallback) {
  EXPECT_EQ(reasons(admitOn(kFallback, w4g128())),
            Reasons{"full-dequant fallback forbidden by fallback=forbid"});
  EXPECT_TRUE(
      admitOn(kFallback, w4g128(), decode(), "sm_90", FallbackPolicy::Warn)
          .accepted());
}

TEST(Admission, TargetBackendAndCapability) {
  EXPECT_EQ(reasons(admitOn(kGemv, w4g128(), decode(), "host")),
            Reasons{"needs sm_80, target is host"});
  EXPECT_EQ(reasons(admitOn(kHostGemv, w4g128(), decode(), "sm_90")),
            Reasons{"runs on the host, target is sm_90"});
  KernelCapability hopper = kernel(kGemv);
  hopper.minCapability = 90;
  Verdict v = admit(registry(), hopper, w4g128(), decode(), target("sm_80"),
                    FallbackPolicy::Forbid);
  EXPECT_EQ(v.reasons, Reasons{"needs sm_90, target is sm_80"});
}

TEST(Admission, TokenRangeOfThePhase) {
  EXPECT_EQ(reasons(admitOn(kGemv, w4g128(), prefill())),
            Reasons{"T in [17, inf) (prefill) above the kernel's maximum "
                    "T = 16"});
  // A static T is the range [T, T].
  EXPECT_EQ(reasons(admitOn(kGemv, w4g128(),
                            {Phase::Prefill, TokenRange::exactly(40)})),
            Reasons{"T = 40 (prefill) above the kernel's maximum T = 16"});
  KernelCapability large = kernel(kMma);
  large.tokens.min = 64;
  Verdict v = admit(registry(), large, w4g128(), prefill(), target("sm_90"),
                    FallbackPolicy::Forbid);
  EXPECT_EQ(v.reasons, Reasons{"T in [17, inf) (prefill) below the kernel's "
                               "minimum T = 64"});
}

TEST(Admission, Representation) {
  OpSignature sig = w4g128();
  sig.representation = "mixed_2416";
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"representation mixed_2416 not in {affine}"});
}

TEST(Admission, CodeContract) {
  OpSignature sig = w4g128();
  sig.descriptor.code = {2, false};
  sig.descriptor.scheme = QuantScheme::Asymmetric;
  sig.descriptor.zeroPoint = ZeroPointKind::Integer;
  // Both GPU kernels read 2-bit codes one per byte field; 7-bit codes have
  // no field.
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  EXPECT_TRUE(admitOn(kMma, sig, prefill()).accepted());
  sig.descriptor.code = {7, false};
  EXPECT_EQ(reasons(admitOn(kMma, sig, prefill())),
            Reasons{"code ui7 not in {si4 twos_complement, si4 offset_binary, "
                    "ui4, si8 twos_complement, ui8, si2 offset_binary, si2 "
                    "twos_complement, ui2, si3 offset_binary, si3 "
                    "twos_complement, ui3, si5 offset_binary, si5 "
                    "twos_complement, ui5, si6 offset_binary, si6 "
                    "twos_complement, ui6}"});
  sig.descriptor.scheme = QuantScheme::Symmetric;
  sig.descriptor.zeroPoint = ZeroPointKind::None;
  // ggml Q4_0's offset-binary si4 is admitted; si8 offset-binary is not.
  sig.descriptor.code = {4, true};
  sig.descriptor.encoding = SignedEncoding::OffsetBinary;
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  sig.descriptor.code = {8, true};
  EXPECT_EQ(reasons(admitOn(kGemv, sig)).front(),
            "code si8 offset_binary not in {si4 twos_complement, si4 "
            "offset_binary, ui4, si8 twos_complement, ui8, si2 "
            "offset_binary, si2 twos_complement, ui2, si3 offset_binary, si3 "
            "twos_complement, ui3, si5 offset_binary, si5 twos_complement, "
            "ui5, si6 offset_binary, si6 twos_complement, ui6}");
}

TEST(Admission, DecoderVersion) {
  OpSignature sig = w4g128();
  sig.descriptor.decoderVersion = 2;
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"decoder version 2, kernel decodes version 1"});
}

TEST(Admission, QParamContract) {
  // Unsigned codes come with an integer zero-point, signed ones without.
  OpSignature sig = w4g128();
  sig.descriptor.code = {4, false};
  sig.descriptor.scheme = QuantScheme::Asymmetric;
  sig.descriptor.zeroPoint = ZeroPointKind::Integer;
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  sig.descriptor.zeroPoint = ZeroPointKind::Min; // ggml Q4_1
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  EXPECT_TRUE(admitOn(kMma, sig, prefill()).accepted());
  sig.descriptor.scheme = QuantScheme::Symmetric;
  sig.descriptor.zeroPoint = ZeroPointKind::None;
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"zero-point none with unsigned codes not in {integer, "
                    "min}"});
  sig.descriptor.code = {8, true};
  sig.descriptor.scheme = QuantScheme::Asymmetric;
  sig.descriptor.zeroPoint = ZeroPointKind::Integer;
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"zero-point integer with signed codes not in {none}"});
  // f32 scales: both GPU kernels read them; W8A8's kernels do not.
  sig = w4g128();
  sig.descriptor.scaleType = FloatType::F32;
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  EXPECT_TRUE(admitOn(kMma, sig, prefill()).accepted());
}

TEST(Admission, GroupSize) {
  OpSignature sig = w4g128();
  sig.descriptor.groupSize = 96;
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"group size 96 not in {16, 32, 64, 128}"});
  // The fallback takes any group size.
  EXPECT_TRUE(admitOn(kFallback, sig, decode(), "sm_90", FallbackPolicy::Allow)
                  .accepted());
}

// What ggml files store (Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K as the GGUF
// reader spells them): the host GEMM and both GPU kernels admit each, and a
// group shorter than a 16-byte chunk of W4 codes takes no zero-point in the
// row layouts.
TEST(Admission, TheHostGemmReadsKeptGGMLCodes) {
  constexpr const char *kHostGemm = "affine_gemm_host";
  auto ggml = [](CodeType code, SignedEncoding encoding, ZeroPointKind zp,
                 int64_t group, FloatType scale) {
    OpSignature sig = w4g128(4096, 4096);
    sig.descriptor.code = code;
    sig.descriptor.encoding = encoding;
    sig.descriptor.zeroPoint = zp;
    sig.descriptor.scheme = zp == ZeroPointKind::None ? QuantScheme::Symmetric
                                                      : QuantScheme::Asymmetric;
    sig.descriptor.groupSize = group;
    sig.descriptor.scaleType = scale;
    return sig;
  };
  using SE = SignedEncoding;
  using ZP = ZeroPointKind;
  const OpSignature q4k =
      ggml({4, false}, SE::TwosComplement, ZP::Min, 32, FloatType::F32);
  const OpSignature q6k =
      ggml({6, true}, SE::OffsetBinary, ZP::None, 16, FloatType::F32);
  for (const OpSignature &sig :
       {q4k, q6k,
        ggml({5, true}, SE::OffsetBinary, ZP::None, 32, FloatType::F16),
        ggml({5, false}, SE::TwosComplement, ZP::Min, 32, FloatType::F16),
        ggml({4, false}, SE::TwosComplement, ZP::Min, 32, FloatType::F16)}) {
    EXPECT_TRUE(admitOn(kHostGemm, sig, decode(), "host").accepted())
        << toString(CodeContract::of(sig.descriptor));
    EXPECT_TRUE(admitOn(kHostGemm, sig, prefill(), "host").accepted());
  }
  // Both GPU kernels take all of them (byte codes, a min, f32 scales,
  // groups of 16).
  EXPECT_TRUE(admitOn(kGemv, q4k).accepted());
  EXPECT_TRUE(admitOn(kGemv, q6k).accepted());
  EXPECT_TRUE(admitOn(kMma, q4k, prefill()).accepted());
  EXPECT_TRUE(admitOn(kMma, q6k, prefill()).accepted());
  // 7-bit codes have no layout field and no kernel.
  OpSignature w7 = q6k;
  w7.descriptor.code = {7, true};
  EXPECT_FALSE(admitOn(kMma, w7, prefill()).accepted());
  // Groups of 16 W4 codes split a 32-code chunk: the host GEMM and the
  // decode GEMV scale each half on its own, which needs no zero-point; for
  // the tensor-core GEMM they are one k16 step, zero-point or not.
  OpSignature w4g16 = w4g128();
  w4g16.descriptor.groupSize = 16;
  EXPECT_TRUE(admitOn(kHostGemm, w4g16, decode(), "host").accepted());
  EXPECT_TRUE(admitOn(kGemv, w4g16).accepted());
  EXPECT_TRUE(admitOn(kMma, w4g16, prefill()).accepted());
  OpSignature asym16 = w4g16;
  asym16.descriptor.code = {4, false};
  asym16.descriptor.encoding = SignedEncoding::TwosComplement;
  asym16.descriptor.scheme = QuantScheme::Asymmetric;
  asym16.descriptor.zeroPoint = ZeroPointKind::Integer;
  EXPECT_EQ(reasons(admitOn(kHostGemm, asym16, decode(), "host")),
            Reasons{"groups of 16 within a 32-code K tile of decode_gemv "
                    "take no zero-point, got integer"});
  EXPECT_TRUE(admitOn(kMma, asym16, prefill()).accepted());
  OpSignature w4g24 = w4g128();
  w4g24.descriptor.groupSize = 24;
  EXPECT_EQ(reasons(admitOn(kHostGemm, w4g24, decode(), "host")),
            (Reasons{"group size 24 not in {16, 32, 64, 128}",
                     "group size 24 is not a whole number of the 32-code K "
                     "tiles decode_gemv reads 4-bit codes in"}));
}

// IQ4_NL (and NF4): unsigned indices into a table, no zero-point. The host
// GEMM and the decode GEMV (GPU and twin) decode either table; the
// tensor-core GEMM multiplies IQ4_NL's values, exact in f16 and bf16, and
// names NF4's table, whose are not, rather than the zero-point a codebook
// has no use for.
TEST(Admission, CodebooksOnlyWhereAKernelDecodesThem) {
  OpSignature iq4nl = w4g128(4096, 4096);
  iq4nl.descriptor.code = {4, false};
  iq4nl.descriptor.encoding = SignedEncoding::TwosComplement;
  iq4nl.descriptor.zeroPoint = ZeroPointKind::None;
  iq4nl.descriptor.scheme = QuantScheme::Symmetric;
  iq4nl.descriptor.groupSize = 32;
  iq4nl.descriptor.codebook = Codebook::IQ4NL;
  for (Codebook c : {Codebook::IQ4NL, Codebook::NF4}) {
    iq4nl.descriptor.codebook = c;
    EXPECT_TRUE(
        admitOn("affine_gemm_host", iq4nl, decode(), "host").accepted());
    EXPECT_TRUE(
        admitOn("affine_gemm_host", iq4nl, prefill(), "host").accepted());
  }
  iq4nl.descriptor.codebook = Codebook::IQ4NL;
  EXPECT_TRUE(admitOn(kGemv, iq4nl).accepted());
  EXPECT_TRUE(admitOn(kHostGemv, iq4nl, decode(), "host").accepted());
  EXPECT_TRUE(admitOn(kMma, iq4nl, prefill()).accepted());
  iq4nl.descriptor.codebook = Codebook::NF4;
  EXPECT_EQ(reasons(admitOn(kMma, iq4nl, prefill())),
            Reasons{"codebook nf4 not in {none, iq4_nl, e2m1, e4m3}"});
  // Without the table, the same unsigned codes with no zero-point are
  // refused by the zero-point rule, as before.
  iq4nl.descriptor.codebook = Codebook::None;
  EXPECT_EQ(reasons(admitOn("affine_gemm_host", iq4nl, decode(), "host")),
            Reasons{"zero-point none with unsigned codes not in {integer, "
                    "min}"});
}

TEST(Admission, ScaleAxis) {
  OpSignature sig = w4g128();
  sig.descriptor.axis = 0;
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"groups along axis 0, kernel needs them along K (axis 1)"});
  sig = w4g128();
  sig.descriptor.granularity = Granularity::PerAxis;
  sig.descriptor.groupSize = 0;
  sig.descriptor.axis = 0;
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  sig.descriptor.axis = 1;
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"per-axis scales along axis 1, kernel needs them along N "
                    "(axis 0)"});
}

TEST(Admission, Granularity) {
  OpSignature sig = w4g128();
  sig.descriptor.granularity = Granularity::PerTensor;
  sig.descriptor.axis = -1;
  sig.descriptor.groupSize = 0;
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"per-tensor scales not admitted"});
  KernelCapability noChannels = kernel(kGemv);
  noChannels.perChannel = false;
  sig.descriptor.granularity = Granularity::PerAxis;
  sig.descriptor.axis = 0;
  EXPECT_EQ(admit(registry(), noChannels, sig, decode(), target("sm_90"),
                  FallbackPolicy::Forbid)
                .reasons,
            Reasons{"per-channel scales not admitted"});
}

TEST(Admission, ActOrder) {
  // The runtime gathers x into the layout's group order, so any kernel
  // reads a permuted weight whole or split along N...
  OpSignature sig = w4g128(64, 256);
  sig.descriptor.permutation = std::vector<int64_t>(256);
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  sig.topology = Topology::Column;
  sig.ranks = {{0, 32, 0, 256}, {32, 32, 0, 256}};
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  // ...but a rank of a K split would need another rank's columns.
  sig.topology = Topology::Row;
  sig.ranks = {{0, 64, 0, 128}, {0, 64, 128, 128}};
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"act-order permutation of K with a row-parallel split"});
}

TEST(Admission, LayoutNeedsARepackPath) {
  OpSignature sig = w4g128();
  // logical and ggml blocks repack into the kernel layouts...
  sig.layout = {"ggml_block", 1, "q4_0", {1, 32}, {0, 0}};
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  // ...an unknown layout does not.
  sig.layout = {"tiled_k_major", 2, "lsb_first", {}, {}};
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"stored layout (tiled_k_major, 2, lsb_first) is not "
                    "(decode_gemv, 1, offset_binary) and no code-preserving "
                    "repack converts it"});
  // The full-dequant kernel reads any layout.
  EXPECT_TRUE(admitOn(kFallback, sig, decode(), "sm_90", FallbackPolicy::Allow)
                  .accepted());
}

TEST(Admission, Dtypes) {
  OpSignature sig = w4g128();
  sig.activation = FloatType::F32;
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"activation f32 not in {f16, bf16}"});
  sig = w4g128();
  sig.accumulator = FloatType::F16;
  EXPECT_EQ(reasons(admitOn(kGemv, sig)),
            Reasons{"accumulator f16 not in {f32}"});
  // The GEMV writes f32 too (split-K needs it); a kernel that does not
  // names its outputs.
  sig = w4g128();
  sig.output = FloatType::F32;
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  KernelCapability narrow = kernel(kGemv);
  narrow.outputs = {FloatType::F16, FloatType::BF16};
  EXPECT_EQ(admit(registry(), narrow, sig, decode(), target("sm_90"),
                  FallbackPolicy::Forbid)
                .reasons,
            Reasons{"output f32 not in {f16, bf16}"});
}

TEST(Admission, ScaleDtypeIsIndependentOfTheActivation) {
  // A bf16 model quantized with f16 scales (what qtc compile writes).
  OpSignature sig = w4g128();
  sig.activation = FloatType::BF16;
  sig.output = FloatType::BF16;
  sig.descriptor.scaleType = FloatType::F16;
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
  sig.descriptor.scaleType = FloatType::BF16;
  sig.activation = FloatType::F16;
  EXPECT_TRUE(admitOn(kGemv, sig).accepted());
}

TEST(Admission, EpilogueAndTopology) {
  KernelCapability narrow = kernel(kGemv);
  narrow.epilogues = {Epilogue::None};
  narrow.topologies = {Topology::Single, Topology::Column};
  OpSignature sig = w4g128();
  sig.epilogue = Epilogue::Bias;
  sig.topology = Topology::Row;
  sig.ranks = {{0, 4096, 0, 2048}, {0, 4096, 2048, 2048}};
  EXPECT_EQ(admit(registry(), narrow, sig, decode(), target("sm_90"),
                  FallbackPolicy::Forbid)
                .reasons,
            (Reasons{"epilogue bias not in {none}",
                     "topology row not in {single, column}"}));
}

/// A GEMV that wants K in whole 128-code tiles: the tile clause in
/// isolation (the built-in GEMV takes any N and K).
KernelCapability tiledGemv() {
  KernelCapability k = kernel(kGemv);
  k.tileN = 1;
  k.tileK = 128;
  return k;
}

Verdict admitTiled(const OpSignature &sig) {
  return admit(registry(), tiledGemv(), sig, decode(), target("sm_90"),
               FallbackPolicy::Forbid);
}

TEST(Admission, TileMultiplesOfTheWholeWeight) {
  KernelCapability mma = kernel(kMma);
  mma.tileN = 64;
  EXPECT_EQ(admit(registry(), mma, w4g128(4100, 4096), prefill(),
                  target("sm_90"), FallbackPolicy::Forbid)
                .reasons,
            Reasons{"N 4100 not a multiple of tile 64"});
  EXPECT_EQ(reasons(admitTiled(w4g128(4100, 4096 + 64))),
            Reasons{"K 4160 not a multiple of tile 128"});
}

TEST(Admission, TheGemvTakesAnyShape) {
  // N and K tails are the kernel's business: a guard and a masked load.
  EXPECT_TRUE(admitOn(kGemv, w4g128(4100, 4096 + 64)).accepted());
  EXPECT_TRUE(admitOn(kGemv, w4g128(37, 300)).accepted());
  EXPECT_TRUE(admitOn(kHostGemv, w4g128(6, 77), decode(), "host").accepted());
}

TEST(Admission, TileMultiplesPerRank) {
  // K = 4160 row-parallel over 4 ranks: only rank 3's 1088 misses the tile.
  OpSignature sig = w4g128(4096, 4160);
  sig.descriptor.groupSize = 64;
  sig.topology = Topology::Row;
  sig.ranks = {{0, 4096, 0, 1024},
               {0, 4096, 1024, 1024},
               {0, 4096, 2048, 1024},
               {0, 4096, 3072, 1088}};
  EXPECT_EQ(reasons(admitTiled(sig)),
            Reasons{"local K 1088 not a multiple of tile 128 on rank 3"});
  // tp=4 row-parallel down_proj (K = 11008) cut evenly: every rank misses.
  sig = w4g128(4096, 11008);
  sig.topology = Topology::Row;
  sig.regrouped = true; // leave the group clause out of this test
  sig.ranks.clear();
  for (int64_t r = 0; r < 4; ++r)
    sig.ranks.push_back({0, 4096, 2752 * r, 2752});
  EXPECT_EQ(reasons(admitTiled(sig)),
            Reasons{"local K 2752 not a multiple of tile 128 on rank 0 (and "
                    "3 more ranks)"});
}

TEST(Admission, GroupAlignmentOfRowSlices) {
  OpSignature sig = w4g128(4096, 11008);
  sig.topology = Topology::Row;
  KernelCapability fine = kernel(kGemv);
  fine.tileK = 64; // isolate the group clause from the tile clause
  sig.ranks.clear();
  for (int64_t r = 0; r < 4; ++r)
    sig.ranks.push_back({0, 4096, 2752 * r, 2752});
  // Offsets 2752 and 8256 cut a group of 128; 5504 = 43 * 128 does not.
  EXPECT_EQ(admit(registry(), fine, sig, decode(), target("sm_90"),
                  FallbackPolicy::Forbid)
                .reasons,
            Reasons{"slice starts at K = 2752, inside a group of 128 on "
                    "rank 1 (and 1 more rank)"});
  sig.regrouped = true; // group_policy = repack: each rank re-groups
  EXPECT_TRUE(admit(registry(), fine, sig, decode(), target("sm_90"),
                    FallbackPolicy::Forbid)
                  .accepted());
}

TEST(Admission, EveryFailingClauseIsReported) {
  OpSignature sig = w4g128(4096, 4100);
  sig.descriptor.groupSize = 96;
  sig.activation = FloatType::F32;
  Verdict v = admitOn(kMma, sig, prefill(), "host");
  EXPECT_EQ(v.reasons, (Reasons{"needs sm_80, target is host",
                                "group size 96 not in {16, 32, 64, 128}",
                                "activation f32 not in {f16, bf16}",
                                "K 4100 not a multiple of tile 8"}));
  EXPECT_EQ(v.reason(), "needs sm_80, target is host; group size 96 not in "
                        "{16, 32, 64, 128}; activation f32 not in {f16, bf16}; "
                        "K 4100 not a multiple of tile 8");
}

TEST(Admission, RequestIsDescribedInFull) {
  OpSignature sig = w4g128();
  sig.epilogue = Epilogue::Bias;
  EXPECT_EQ(describeRequest(sig),
            "affine si4 twos_complement zp=none g128 scale=f16 act=f16 "
            "acc=f32 out=f16 epilogue=bias layout=(logical, 1, lsb_first)");
}

namespace {
/// W8 symmetric per channel, activations quantized per token (w8a8).
OpSignature w8a8(ActivationQuant a = ActivationQuant::PerTokenSym,
                 int64_t k = 4096) {
  OpSignature sig = w4g128(4096, k);
  sig.descriptor.code = {8, true};
  sig.descriptor.granularity = Granularity::PerAxis;
  sig.descriptor.axis = 0;
  sig.descriptor.groupSize = 0;
  sig.activationQuant = a;
  return sig;
}
constexpr const char *kW8A8 = "w8a8_gemv_decode_sm80";
} // namespace

TEST(Admission, ActivationQuantMustBeTheKernels) {
  EXPECT_TRUE(admitOn(kW8A8, w8a8()).accepted());
  EXPECT_TRUE(admitOn(kW8A8, w8a8(ActivationQuant::PerTokenAsym)).accepted());
  EXPECT_TRUE(
      admitOn("w8a8_gemv_decode_host", w8a8(), decode(), "host").accepted());
  EXPECT_EQ(reasons(admitOn(kGemv, w8a8())),
            Reasons{"activations per_token_sym not in {none}"});
  OpSignature plain = w8a8(ActivationQuant::None);
  EXPECT_EQ(reasons(admitOn(kW8A8, plain)),
            Reasons{"activations none not in {per_token_sym, "
                    "per_token_asym}"});
}

TEST(Admission, ChunkedKernelTakesPrefill) {
  // Entries for T = 1..16 run any T above in chunks of 16 rows.
  EXPECT_TRUE(admitOn(kW8A8, w8a8(), prefill()).accepted());
  EXPECT_EQ(reasons(admitOn(kW8A8, w8a8(ActivationQuant::PerTokenSym, 4100))),
            Reasons{"K 4100 not a multiple of tile 16"});
}
