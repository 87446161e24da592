//===- KernelLayout.cpp - Kernel-native code layouts ----------------------===//
//
// One position function per layout, used by both pack and unpack; the
// tests check it is a bijection onto the buffer's fields and pin it to the
// fragment order the generated kernels read (see KernelLayout.h).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/KernelLayout.h"

#include "NumericsDetail.h"

#include <algorithm>
#include <limits>

namespace qtensor {

using numerics_detail::mulOverflow;

namespace {

/// Logical k extent of one mma.sync m16n8k16 B fragment step.
constexpr int64_t kMmaK = 16;

int64_t codesPerWord(unsigned bits) { return 32 / bits; }

/// Rows per prefill panel: 16 bytes per lane hold 128 / b codes, 4 per n8
/// tile, so a panel spans (128 / b / 4) n8 tiles = 256 / b rows.
int64_t panelRows(unsigned bits) { return 256 / bits; }

/// Rounds `value` up to a multiple of `multiple`; false on overflow.
bool roundUp(int64_t value, int64_t multiple, int64_t &out) {
  int64_t rest = value % multiple;
  if (rest == 0) {
    out = value;
    return true;
  }
  return !__builtin_add_overflow(value, multiple - rest, &out);
}

} // namespace

KernelLayoutId kernelLayoutId(KernelLayoutKind kind) {
  switch (kind) {
  case KernelLayoutKind::DecodeGemv:
    return {"decode_gemv", 1, "offset_binary"};
  case KernelLayoutKind::PrefillMma:
    return {"prefill_mma", 1, "offset_binary"};
  }
  return {"", 0, ""};
}

bool parseKernelLayoutFamily(std::string_view family, KernelLayoutKind &kind) {
  for (KernelLayoutKind k :
       {KernelLayoutKind::DecodeGemv, KernelLayoutKind::PrefillMma}) {
    if (kernelLayoutId(k).family == family) {
      kind = k;
      return true;
    }
  }
  return false;
}

Expected<KernelLayoutGeometry>
kernelLayoutGeometry(const KernelLayoutSpec &spec, int64_t rows, int64_t cols) {
  const bool byteCodes =
      spec.bits == 2 || spec.bits == 3 || spec.bits == 5 || spec.bits == 6;
  if (spec.bits != 4 && spec.bits != 8 && !byteCodes)
    return makeError("kernel layout ", kernelLayoutId(spec.kind).family,
                     " holds 2-, 3-, 4-, 5-, 6- or 8-bit codes, got ",
                     spec.bits, " bits");
  const unsigned field = spec.fieldBits();
  if (rows <= 0 || cols <= 0)
    return makeError("kernel layout shape [", rows, ", ", cols,
                     "] must be positive");
  KernelLayoutGeometry g;
  bool ok;
  if (spec.kind == KernelLayoutKind::DecodeGemv) {
    const int64_t chunk = 128 / field;
    g.paddedRows = rows;
    ok = roundUp(cols, chunk, g.paddedCols);
    g.chunksPerRow = g.paddedCols / chunk;
  } else {
    ok = roundUp(rows, panelRows(field), g.paddedRows) &&
         roundUp(cols, kMmaK, g.paddedCols);
    g.chunksPerRow = g.paddedCols / kMmaK;
  }
  uint64_t elements;
  if (!ok ||
      mulOverflow(static_cast<uint64_t>(g.paddedRows),
                  static_cast<uint64_t>(g.paddedCols), elements) ||
      elements > std::numeric_limits<uint64_t>::max() / field)
    return makeError("kernel layout size of [", rows, ", ", cols, "] at ",
                     spec.bits, " bits overflows");
  // Padded extents are multiples of 32 / f codes per word, so this is exact.
  g.bytes = elements * field / 8;
  if (g.bytes > std::numeric_limits<size_t>::max())
    return makeError("kernel layout size of [", rows, ", ", cols, "] at ",
                     spec.bits, " bits overflows");
  return g;
}

KernelLayoutPosition kernelLayoutPosition(const KernelLayoutSpec &spec,
                                          const KernelLayoutGeometry &geometry,
                                          int64_t row, int64_t col) {
  const unsigned bits = spec.fieldBits();
  if (spec.kind == KernelLayoutKind::DecodeGemv) {
    const uint64_t wordsPerRow =
        static_cast<uint64_t>(geometry.paddedCols / codesPerWord(bits));
    return {static_cast<uint64_t>(row) * wordsPerRow +
                static_cast<uint64_t>(col / codesPerWord(bits)),
            static_cast<unsigned>(col % codesPerWord(bits)) * bits};
  }
  // prefill_mma: locate the panel, then the lane and field inside it.
  const int64_t slab = row / panelRows(bits);
  const int64_t nInPanel = row % panelRows(bits);
  const int64_t kStep = col / kMmaK;
  const int64_t kInStep = col % kMmaK;
  const int64_t tile = nInPanel / 8;
  const int64_t highRegister = kInStep / 8; // b1 holds k0 + 8, k0 + 9
  const int64_t kk = kInStep % 8;
  const int64_t lane = (nInPanel % 8) * 4 + kk / 2;
  const int64_t pairHalf = kk % 2; // low or high half of the half2
  const uint64_t panel = static_cast<uint64_t>(slab) *
                             static_cast<uint64_t>(geometry.chunksPerRow) +
                         static_cast<uint64_t>(kStep);
  uint64_t word = panel * 128 + static_cast<uint64_t>(lane) * 4;
  unsigned shift;
  if (bits == 4) {
    word += static_cast<uint64_t>(tile / 2);
    const int64_t pair = (tile % 2) * 2 + highRegister;
    shift = static_cast<unsigned>(4 * (pair + 4 * pairHalf));
  } else {
    word += static_cast<uint64_t>(tile);
    shift = static_cast<unsigned>(8 * (highRegister + 2 * pairHalf));
  }
  return {word, shift};
}

namespace {

uint32_t loadWord(const uint8_t *bytes, uint64_t word) {
  const uint8_t *p = bytes + word * 4;
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

void orWord(uint8_t *bytes, uint64_t word, uint32_t value) {
  uint8_t *p = bytes + word * 4;
  for (int i = 0; i < 4; ++i)
    p[i] |= static_cast<uint8_t>(value >> (8 * i));
}

} // namespace

Expected<std::vector<uint8_t>> packKernelLayout(const KernelLayoutSpec &spec,
                                                const int32_t *codes,
                                                int64_t rows, int64_t cols) {
  Expected<KernelLayoutGeometry> geometry =
      kernelLayoutGeometry(spec, rows, cols);
  if (!geometry)
    return geometry.error();
  if (!codes)
    return makeError("code pointer is null for a [", rows, ", ", cols,
                     "] tensor");
  const int64_t offset = spec.isSigned ? int64_t(1) << (spec.bits - 1) : 0;
  const int64_t lo = -offset;
  const int64_t hi = (int64_t(1) << spec.bits) - 1 - offset;
  std::vector<uint8_t> bytes(static_cast<size_t>(geometry->bytes), 0);
  auto outOfRange = [&](int64_t r, int64_t c, int64_t code) {
    return makeError("code at row ", r, ", column ", c, " is ", code,
                     ", outside the ", spec.isSigned ? "signed" : "unsigned",
                     " ", spec.bits, "-bit range [", lo, ", ", hi, "]");
  };
  if (spec.kind == KernelLayoutKind::DecodeGemv) {
    // Rows of whole words, fields in column order: built a word at a time
    // (where kernelLayoutPosition puts them, without its divisions per
    // code; half the time at 4096 x 4096).
    const unsigned f = spec.fieldBits();
    const int64_t perWord = codesPerWord(f);
    const int64_t wordsPerRow = geometry->paddedCols / perWord;
    for (int64_t r = 0; r < rows; ++r) {
      const int32_t *row = codes + r * cols;
      for (int64_t w = 0; w < wordsPerRow; ++w) {
        uint32_t word = 0;
        const int64_t first = w * perWord;
        const int64_t n = std::min(perWord, cols - first);
        // Branch-free over the word; the first bad code is named after.
        bool bad = false;
        for (int64_t j = 0; j < n; ++j) {
          const int64_t code = row[first + j];
          bad |= code < lo || code > hi;
          word |= static_cast<uint32_t>(code + offset) << (unsigned(j) * f);
        }
        if (bad)
          for (int64_t j = 0; j < n; ++j)
            if (row[first + j] < lo || row[first + j] > hi)
              return outOfRange(r, first + j, row[first + j]);
        orWord(bytes.data(), uint64_t(r * wordsPerRow + w), word);
      }
    }
    return bytes;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t code = codes[r * cols + c];
      if (code < lo || code > hi)
        return outOfRange(r, c, code);
      KernelLayoutPosition at = kernelLayoutPosition(spec, *geometry, r, c);
      orWord(bytes.data(), at.word,
             static_cast<uint32_t>(code + offset) << at.shift);
    }
  }
  return bytes;
}

Expected<std::vector<int32_t>> unpackKernelLayout(const KernelLayoutSpec &spec,
                                                  const uint8_t *bytes,
                                                  size_t numBytes, int64_t rows,
                                                  int64_t cols) {
  Expected<KernelLayoutGeometry> geometry =
      kernelLayoutGeometry(spec, rows, cols);
  if (!geometry)
    return geometry.error();
  const KernelLayoutId id = kernelLayoutId(spec.kind);
  if (numBytes != geometry->bytes)
    return makeError("kernel layout ", id.family, " buffer holds ", numBytes,
                     " bytes, but [", rows, ", ", cols, "] ", spec.bits,
                     "-bit codes need exactly ", geometry->bytes);
  if (!bytes)
    return makeError("kernel layout buffer pointer is null");
  const int64_t offset = spec.isSigned ? int64_t(1) << (spec.bits - 1) : 0;
  const uint32_t mask = (uint32_t(1) << spec.fieldBits()) - 1;
  const uint32_t maxField = (uint32_t(1) << spec.bits) - 1;
  if (static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols) >
      std::numeric_limits<size_t>::max() / sizeof(int32_t))
    return makeError("unpacked tensor [", rows, ", ", cols, "] is too large");
  std::vector<int32_t> codes(static_cast<size_t>(rows * cols));
  auto badField = [&](uint32_t field, int64_t r, int64_t c) {
    return makeError("kernel layout ", id.family, " has field ", field,
                     " at row ", r, ", column ", c, ", above the largest ",
                     spec.bits, "-bit code field ", maxField);
  };
  auto badPadding = [&](int64_t r, int64_t c) {
    return makeError("kernel layout ", id.family,
                     " has a nonzero padding field at row ", r, ", column ", c,
                     " (logical shape [", rows, ", ", cols, "])");
  };
  if (spec.kind == KernelLayoutKind::DecodeGemv) {
    // Rows of whole words, fields in column order (packKernelLayout's
    // loop): a word at a time, in the same row-major order as the general
    // loop below, so the same field is reported first.
    const unsigned f = spec.fieldBits();
    const int64_t perWord = codesPerWord(f);
    const int64_t wordsPerRow = geometry->paddedCols / perWord;
    // Where every field value is a code (4 bits in 4, 8 in 8), a word
    // inside the row has nothing to check.
    const bool everyFieldACode = maxField == mask;
    for (int64_t r = 0; r < rows; ++r) {
      int32_t *row = codes.data() + r * cols;
      for (int64_t w = 0; w < wordsPerRow; ++w) {
        const uint32_t word = loadWord(bytes, uint64_t(r * wordsPerRow + w));
        const int64_t first = w * perWord;
        if (everyFieldACode && first + perWord <= cols) {
          for (int64_t j = 0; j < perWord; ++j)
            row[first + j] = static_cast<int32_t>(
                int64_t((word >> (unsigned(j) * f)) & mask) - offset);
          continue;
        }
        for (int64_t j = 0; j < perWord; ++j) {
          const uint32_t field = (word >> (unsigned(j) * f)) & mask;
          const int64_t c = first + j;
          if (field > maxField)
            return badField(field, r, c);
          if (c < cols)
            row[c] = static_cast<int32_t>(int64_t(field) - offset);
          else if (field != 0)
            return badPadding(r, c);
        }
      }
    }
    return codes;
  }
  // Every field of the buffer is visited once (the position function is a
  // bijection onto the padded extents), so padding is checked exhaustively.
  for (int64_t r = 0; r < geometry->paddedRows; ++r) {
    for (int64_t c = 0; c < geometry->paddedCols; ++c) {
      KernelLayoutPosition at = kernelLayoutPosition(spec, *geometry, r, c);
      const uint32_t field = (loadWord(bytes, at.word) >> at.shift) & mask;
      if (field > maxField)
        return badField(field, r, c);
      if (r < rows && c < cols)
        codes[static_cast<size_t>(r * cols + c)] =
            static_cast<int32_t>(int64_t(field) - offset);
      else if (field != 0)
        return badPadding(r, c);
    }
  }
  return codes;
}

} // namespace qtensor
