//===- KernelLayout.h - Kernel-native code layouts --------------*- C++ -*-===//
//
// The physical order in which the generated GPU kernels read packed weight
// codes (seed M8.1 0x06, M8.9 0x03C, 0x08B). A logical [N, K] code tensor is
// repacked into one of these layouts after placement; unpacking gives back
// the logical codes exactly (code preservation), which the tests prove for
// every width, sign and tail.
//
// Both layouts store every code as an unsigned field: signed (symmetric)
// codes are stored offset binary (code + 2^(b-1)), so the kernels convert
// any field with the same magic-number trick and fold the offset into the
// zero-point they subtract. Storage is a sequence of little-endian 32-bit
// words; fields never straddle a word.
//
//   decode_gemv (v1): row-major, K padded to a multiple of 128 / f codes so
//     each row is a whole number of 16-byte chunks; inside a word, code j
//     sits at bits [f*j, f*j + f), f the field width (4 for W4, 8 for W5,
//     W6 and W8: a 5- or 6-bit code fills the low bits of its byte). A
//     decode lane reads one chunk (32 W4 or 16 byte codes) with one 128-bit
//     load.
//
//   prefill_mma (v1): panels of k16 x n(256 / f) codes (n64 for W4, n32
//     for byte fields: W8, and W2, W3, W5, W6 in the low bits of a byte as
//     above), each 512 bytes = 32 lanes x 16 bytes, ordered n-slab major
//     then k16 step. Lane l's 16 bytes hold exactly its B fragments of
//     mma.sync m16n8k16 (row.col) for every n8 tile in the panel: with
//     k0 = 2 * (l % 4) and n = 8 * tile + l / 4, the fragment needs codes at
//     k0, k0 + 1 (register b0) and k0 + 8, k0 + 9 (register b1).
//       W4: word j covers tiles 2j and 2j+1; nibble i and nibble i + 4 form
//           the i-th half2 pair: i = 0 -> tile 2j (k0, k0+1), i = 1 -> tile
//           2j (k0+8, k0+9), i = 2 -> tile 2j+1 (k0, k0+1), i = 3 -> tile
//           2j+1 (k0+8, k0+9). (word >> 4i) & 0x000F000F | 0x64006400 is
//           then the half2 (1024 + lo, 1024 + hi).
//       W8: word j covers tile j: bytes 0 and 2 hold (k0, k0+1), bytes 1
//           and 3 hold (k0+8, k0+9); masks 0x00FF00FF at shifts 0 and 8.
//     N is padded to a whole panel width and K to a multiple of 16.
//
// Padding fields are zero on pack and must be zero on unpack: the bytes may
// come from an untrusted artifact, and a layout mismatch must fail loudly.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_NUMERICS_KERNELLAYOUT_H
#define QTENSOR_NUMERICS_KERNELLAYOUT_H

#include "qtensor/Support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace qtensor {

enum class KernelLayoutKind : uint8_t {
  DecodeGemv, ///< "decode_gemv": 16-byte row chunks for 128-bit GEMV loads
  PrefillMma, ///< "prefill_mma": mma.sync m16n8k16 B-fragment panels
};

/// The layout id a kernel declares: (family, version, encoding).
struct KernelLayoutId {
  std::string_view family;
  uint32_t version;
  std::string_view encoding;
};

/// Which physical layout, for which code width and sign.
struct KernelLayoutSpec {
  KernelLayoutKind kind = KernelLayoutKind::DecodeGemv;
  /// Code width: 4 or 8; 2-, 3-, 5- and 6-bit codes (ggml Q2_K, Q3_K,
  /// Q5_x, Q6_K) one per byte field, in either layout.
  unsigned bits = 4;
  bool isSigned = false; ///< logical codes are signed (stored offset binary)

  /// Width of the field a code is stored in: 4 for 4-bit codes, else 8.
  unsigned fieldBits() const { return bits == 4 ? 4 : 8; }
};

/// The (family, version, encoding) id of `kind`.
KernelLayoutId kernelLayoutId(KernelLayoutKind kind);

/// Parses a family name; false for an unknown name.
bool parseKernelLayoutFamily(std::string_view family, KernelLayoutKind &kind);

/// Padded extents and storage size of a [rows, cols] tensor in a layout.
struct KernelLayoutGeometry {
  int64_t paddedRows = 0;
  int64_t paddedCols = 0;
  uint64_t bytes = 0;
  /// Decode: 16-byte chunks per row. Prefill: k16 steps per n-slab.
  int64_t chunksPerRow = 0;
};

/// Errors on widths the layout does not hold, nonpositive shapes and
/// overflow.
Expected<KernelLayoutGeometry>
kernelLayoutGeometry(const KernelLayoutSpec &spec, int64_t rows, int64_t cols);

/// Packs row-major logical codes [rows, cols]. Codes must lie in the range
/// of a `bits`-wide signed or unsigned integer; an out-of-range code is an
/// error naming its row and column.
Expected<std::vector<uint8_t>> packKernelLayout(const KernelLayoutSpec &spec,
                                                const int32_t *codes,
                                                int64_t rows, int64_t cols);

/// The inverse of packKernelLayout. `numBytes` must equal the geometry's
/// size and every padding field must be zero.
Expected<std::vector<int32_t>> unpackKernelLayout(const KernelLayoutSpec &spec,
                                                  const uint8_t *bytes,
                                                  size_t numBytes, int64_t rows,
                                                  int64_t cols);

/// Where logical code (row, col) lives: 32-bit word index and bit shift.
/// Exposed so the kernel generators' tests can check their own index math
/// against the packer. Precondition: 0 <= row < paddedRows, 0 <= col <
/// paddedCols of a valid geometry.
struct KernelLayoutPosition {
  uint64_t word;
  unsigned shift;
};
KernelLayoutPosition kernelLayoutPosition(const KernelLayoutSpec &spec,
                                          const KernelLayoutGeometry &geometry,
                                          int64_t row, int64_t col);

} // namespace qtensor

#endif // QTENSOR_NUMERICS_KERNELLAYOUT_H
