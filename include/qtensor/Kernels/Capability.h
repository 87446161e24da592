//===- Capability.h - What a kernel accepts (seed M8.9 0x07A) ---*- C++ -*-===//
//
// The capability signature of one kernel: representation, exact layout id,
// code and qparam contracts, activation dtype, group sizes, scale axis,
// accumulator, output dtypes, topology, tile multiples, minimum capability,
// token range (phase) and epilogue. Plain data without MLIR: the compiler's
// qtensor-select-layouts and the runtime's loader evaluate the same
// admission predicate over the same structs (docs/kernels.md).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_KERNELS_CAPABILITY_H
#define QTENSOR_KERNELS_CAPABILITY_H

#include "qtensor/Descriptor/Descriptor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::kernels {

/// Decode is T <= 16 tokens per step (weight-bandwidth bound); prefill is
/// everything above (seed M8.9 0x07C).
enum class Phase : uint8_t { Decode, Prefill };
/// The phases a compile selects kernels for: one, or both.
enum class PhaseChoice : uint8_t { Decode, Prefill, Both };
/// The phases of a selection, decode first.
std::vector<Phase> phasesOf(PhaseChoice s);
enum class Backend : uint8_t { Cuda, Host };
enum class Epilogue : uint8_t { None, Bias };
/// How the weight is split over ranks: `single` (no placement), a
/// `replicated` copy per rank, `column` (N sliced) or `row` (K sliced).
enum class Topology : uint8_t { Single, Replicated, Column, Row };
/// What may happen when no kernel admits an op: a full-dequant fallback is
/// `forbid`den, allowed with a `warn`ing, or `allow`ed (counted either way).
enum class FallbackPolicy : uint8_t { Forbid, Warn, Allow };
/// One packed copy of each weight (`shared`), or one per phase when their
/// kernels read different layouts (`per_phase`, HBM paid twice).
enum class LayoutMode : uint8_t { Shared, PerPhase };
/// How a weight reaches its kernel layout: already there, packed at export
/// (`prepacked`), or repacked by the loader (`load_time`).
enum class RepackKind : uint8_t { None, Prepacked, LoadTime };

/// How a kernel takes its activations (seed M8.1 0x05): as given (`none`),
/// or quantized to int8 per token at run time by its own quantizer, with a
/// scale per row (`per_token_sym`: i8 codes) or a scale and a zero-point
/// per row (`per_token_asym`: u8 codes), the integer GEMM then applying
/// the zero-point correction terms (W8A8, Conversion/W8A8Kernel.h;
/// Numerics/ActivationQuant.h is the arithmetic, bit for bit).
enum class ActivationQuant : uint8_t { None, PerTokenSym, PerTokenAsym };

/// The largest T of decode; prefill starts above it.
constexpr int64_t kMaxDecodeTokens = 16;

/// The device an op is compiled for.
struct Target {
  std::string name; ///< "sm_80", "sm_90", "host"
  Backend backend = Backend::Cuda;
  uint32_t capability = 0; ///< compute capability x 10 (sm_90 = 90); 0: host
};

/// The exact (family, version, encoding) tuple a kernel reads.
struct LayoutId {
  std::string family;
  uint32_t version = 1;
  std::string encoding;

  static LayoutId of(const LayoutDescriptor &l) {
    return {l.family, l.version, l.encoding};
  }
  bool operator==(const LayoutId &o) const {
    return family == o.family && version == o.version && encoding == o.encoding;
  }
  bool operator!=(const LayoutId &o) const { return !(*this == o); }
};

/// A hashable identity of what the stored codes are: width, sign and, for
/// signed codes, their encoding ("si4 twos_complement", "ui4").
struct CodeContract {
  unsigned bits = 4;
  bool isSigned = false;
  SignedEncoding encoding = SignedEncoding::TwosComplement;

  static CodeContract of(const AffineDescriptor &d);
  bool operator==(const CodeContract &o) const {
    return bits == o.bits && isSigned == o.isSigned &&
           (!isSigned || encoding == o.encoding);
  }
  bool operator!=(const CodeContract &o) const { return !(*this == o); }
};

/// Tokens per call, T in [min, max]; no max means unbounded.
struct TokenRange {
  int64_t min = 1;
  std::optional<int64_t> max;

  static TokenRange exactly(int64_t t) { return {t, t}; }
  /// Whether every T of `inner` is in this range.
  bool contains(const TokenRange &inner) const;
  bool operator==(const TokenRange &o) const {
    return min == o.min && max == o.max;
  }
};

/// A kernel-native layout: its id and the tile its packer rounds to, which
/// depends on the code width (docs/kernels.md).
struct KernelLayout {
  LayoutId id;
  std::string summary;
  std::vector<unsigned> bits;  ///< code widths it packs
  std::vector<int64_t> tileW4; ///< [N, K] tile for 4-bit codes
  std::vector<int64_t> tileW8; ///< [N, K] tile for byte codes (5, 6, 8 bits)

  /// The tile for `codeBits`; empty when the layout cannot hold them.
  std::vector<int64_t> tileFor(unsigned codeBits) const;
  bool operator==(const KernelLayout &o) const;
};

/// A code-preserving repack the loader (or the exporter) can perform.
struct RepackPath {
  LayoutId from;
  LayoutId to;
  /// The exporter can write `to` directly (the source is our own logical
  /// layout), so the weight is marked prepacked instead of repacked at load.
  bool atExport = false;
  bool operator==(const RepackPath &o) const {
    return from == o.from && to == o.to && atExport == o.atExport;
  }
};

/// One kernel's capability signature (seed M8.9 0x07A).
struct KernelCapability {
  std::string id; ///< stable: artifacts and traces name kernels by it
  std::string summary;
  std::vector<Phase> phases; ///< phases it is built for (must match tokens)
  std::vector<Backend> backends;
  uint32_t minCapability = 0; ///< for Backend::Cuda, x 10
  std::vector<std::string> representations;
  /// The layout it reads; absent only for a full-dequant kernel, which
  /// decodes any stored layout through the reference decoder.
  std::optional<LayoutId> layout;
  std::vector<CodeContract> codes;
  // qparam contract
  /// Zero-point kinds admitted with signed and with unsigned codes: the
  /// generated kernels take signed codes symmetric and unsigned codes with
  /// an integer zero-point.
  std::vector<ZeroPointKind> signedZeroPoints;
  std::vector<ZeroPointKind> unsignedZeroPoints;
  /// The value tables it decodes (Codebook::None: codes are their own
  /// values). A codebook's codes are unsigned with zero-point none, which
  /// the descriptor guarantees, so the zero-point lists do not apply.
  std::vector<Codebook> codebooks{Codebook::None};
  std::vector<FloatType> scaleTypes;
  std::vector<int64_t> groupSizes; ///< admitted groups along K
  bool anyGroupSize = false;       ///< full-dequant only
  bool perChannel = false;         ///< one scale per output channel (N)
  bool perTensor = false;
  bool actOrder = false; ///< a permutation of K (act-order)
  uint32_t decoderVersion = 1;
  int64_t groupAxis = 1;   ///< scale axis of groups: K
  int64_t channelAxis = 0; ///< scale axis of per-channel scales: N
  std::vector<FloatType> activations;
  std::vector<FloatType> accumulators;
  std::vector<FloatType> outputs;
  std::vector<Topology> topologies;
  int64_t tileN = 1, tileK = 1; ///< local N and K multiples, every rank
  TokenRange tokens;
  std::vector<Epilogue> epilogues;
  int priority = 0; ///< higher wins among admitted kernels
  bool fullDequant = false;
  /// Its entries take any contiguous range of output rows (the host GEMM):
  /// an artifact entry may claim `row_split` only for such a kernel.
  bool rowSplit = false;
  /// Quantizes its activations to int8 per block of this many at T = 1
  /// (0: multiplies them as given). Part of the numeric contract: the
  /// parity checks compare it with the reference on X so quantized.
  int64_t activationBlock = 0;
  /// The largest (local) K it takes, if it has a limit.
  std::optional<int64_t> maxK;
  /// How it takes its activations; an op's signature (OpSignature::
  /// activationQuant) must ask for one of these.
  std::vector<ActivationQuant> activationQuants{ActivationQuant::None};
  /// Non-zero: each entry point takes one T up to this, and a larger T
  /// (prefill) runs as consecutive calls of at most this many rows (the
  /// W8A8 GEMV: its quantizer and GEMV are specialized per T).
  int64_t chunkRows = 0;

  bool operator==(const KernelCapability &o) const;
  bool operator!=(const KernelCapability &o) const { return !(*this == o); }
};

/// The registry: layouts, the repacks between them, and the kernels.
struct KernelRegistry {
  std::vector<KernelLayout> layouts;
  std::vector<RepackPath> repackPaths;
  std::vector<KernelCapability> kernels;

  const KernelCapability *findKernel(const std::string &id) const;
  /// The host kernel with `kernel`'s layout, phases and numeric contract
  /// (codes, qparams, dtypes, epilogues, tokens; built by the same
  /// emitter): what runs a GPU artifact's
  /// kernels on a machine without a GPU. `kernel` itself when it runs on
  /// the host; none for the full-dequant fallback or without such a kernel.
  const KernelCapability *hostTwin(const KernelCapability &kernel) const;
  const KernelLayout *findLayout(const LayoutId &id) const;
  const RepackPath *findRepack(const LayoutId &from, const LayoutId &to) const;
  bool operator==(const KernelRegistry &o) const {
    return layouts == o.layouts && repackPaths == o.repackPaths &&
           kernels == o.kernels;
  }
};

//===----------------------------------------------------------------------===//
// Spellings (text listing, JSON, options, diagnostics)
//===----------------------------------------------------------------------===//

const char *toString(Phase p);
const char *toString(PhaseChoice s);
const char *toString(Backend b);
const char *toString(Epilogue e);
const char *toString(Topology t);
const char *toString(FallbackPolicy p);
const char *toString(LayoutMode m);
const char *toString(RepackKind k);
const char *toString(ActivationQuant a);
std::optional<Phase> parsePhase(const std::string &s);
std::optional<PhaseChoice> parsePhaseChoice(const std::string &s);
std::optional<Backend> parseBackend(const std::string &s);
std::optional<Epilogue> parseEpilogue(const std::string &s);
std::optional<Topology> parseTopology(const std::string &s);
std::optional<FallbackPolicy> parseFallbackPolicy(const std::string &s);
std::optional<LayoutMode> parseLayoutMode(const std::string &s);
std::optional<RepackKind> parseRepackKind(const std::string &s);
std::optional<ActivationQuant> parseActivationQuant(const std::string &s);

/// "sm_80", "sm_86", "sm_89", "sm_90" or "host".
std::optional<Target> parseTarget(const std::string &s);
/// The spellings parseTarget accepts, for "expected one of" messages.
const std::vector<std::string> &knownTargets();
/// "sm_80" for 80.
std::string capabilityName(uint32_t capability);

/// "(decode_gemv, 1, offset_binary)".
std::string toString(const LayoutId &id);
/// "si4 twos_complement", "ui4".
std::string toString(const CodeContract &c);
std::optional<CodeContract> parseCodeContract(const std::string &s);
/// "[1, 16]", "[17, inf)", "T = 1" for a single T.
std::string toString(const TokenRange &r);

/// The T range of a phase when T is not known statically.
TokenRange phaseTokens(Phase p);
/// The phase a static T belongs to.
Phase phaseOfTokens(int64_t t);

} // namespace qtensor::kernels

#endif // QTENSOR_KERNELS_CAPABILITY_H
