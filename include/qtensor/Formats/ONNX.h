//===- ONNX.h - The quantized linears of an ONNX model ----------*- C++ -*-===//
//
// An ONNX model (`qtc compile model.onnx --quant keep`) brings its weights
// already quantized, in one of the two forms onnxruntime's own 4-bit
// quantizer (MatMulNBitsQuantizer) writes:
//
//   com.microsoft.MatMulNBits(A, B, scales[, zero_points[, g_idx[, bias]]])
//       attributes K, N, bits (2, 4, 8), block_size; y = A dequant(B)^T (+b)
//       B uint8 [N, ceil(K/bs), bs*bits/8]: codes low-first along K;
//       scales [N, ceil(K/bs)] (or flat); zero_points uint8 [N,
//       ceil(ceil(K/bs)*bits/8)] packed low-first along the blocks, or in
//       the scales' float type, absent meaning 2^(bits-1);
//   MatMul(A, DequantizeLinear(W, scale[, zero_point]))
//       W [K, N] in int4, uint4, int8 or uint8 (4-bit values packed two to a
//       byte, low nibble first, in W's C order); blocked along axis 0
//       (opset 21 `block_size`: scale [ceil(K/bs), N]), per output channel
//       (axis 1: scale [N]) or per tensor (a scalar).
//
// Both become one quantized linear W [N, K] whose codes are the file's (the
// same integers, moved out of their bytes; never re-quantized), with
// x = s (q - z) and the descriptor of Descriptor.h. Zero-points that are all
// 2^(bits-1) (MatMulNBits' symmetric form) or all 0 (DequantizeLinear's)
// make a symmetric signed code.
//
// Everything read is untrusted (seed M8.9 0x05, 0x0CC): the protobuf is
// parsed with bounded recursion and size; every node's attributes and every
// initializer's type, shape and byte count are checked before a byte is
// read; external data is opened under the model's directory only (relative
// paths, no "..", no symbolic link or hard link anywhere on the way,
// ArtifactPath.h's rules), its offset and length are checked against the
// file, and a `checksum` (SHA-1 of the file) is verified where given.
// Errors name the file, node and tensor.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_ONNX_H
#define QTENSOR_FORMATS_ONNX_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Formats/HFQuantized.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::onnxmodel {

/// One quantized linear of the graph: y = x W^T (+ b), W [N, K].
struct QuantizedLinear {
  enum class Form : uint8_t { MatMulNBits, DequantizeMatMul };
  Form form = Form::MatMulNBits;
  std::string node;          ///< the (MatMul or MatMulNBits) node's name
  std::string weight;        ///< the quantized weight's initializer name
  std::string input, output; ///< the node's A and Y value names
  int64_t n = 0, k = 0;
  unsigned bits = 4;
  int64_t blockSize = 0; ///< > 0: blocks along K; 0: per channel; -1: tensor
  bool storedSigned = false; ///< the file stores int4/int8 (else unsigned)
  /// The stored tensors: views into the model or its external data. 4-bit
  /// codes and zero-points are U8 views of their packed bytes.
  const safetensors::TensorView *codes = nullptr, *scales = nullptr,
                                *zeros = nullptr, *bias = nullptr;
  /// The logical descriptor (logical layout, element type F16).
  QuantizedTensorDescriptor descriptor;
  /// "ONNX_MATMULNBITS_INT4", "ONNX_QDQ_INT4": how reports name the form.
  std::string storedType;
};

/// The codes and qparams of `l` in logical form (codes [N, K] row-major,
/// one scale and zero-point per qparam of its descriptor).
Expected<hfquant::LogicalParts> unpack(const QuantizedLinear &l);

struct Limits {
  /// The largest .onnx file parsed (protobuf cannot hold more than 2 GiB;
  /// larger models keep their weights in external data).
  uint64_t maxModelBytes = uint64_t(2) << 30;
  int recursionLimit = 64;
};

class Model {
public:
  /// Parses `path`, resolves the initializers' data and finds the quantized
  /// linears. Operators other than the linears' are left to the graph and
  /// not read.
  static Expected<Model> open(const std::string &path,
                              const Limits &limits = Limits());
  /// The same for a model already in memory (copied by the parse), named
  /// `name` in errors, its external data looked for under `directory`.
  static Expected<Model> fromBuffer(const uint8_t *data, size_t size,
                                    const std::string &name,
                                    const std::string &directory,
                                    const Limits &limits = Limits());
  Model(Model &&) noexcept;
  Model &operator=(Model &&) noexcept;
  ~Model();

  const std::string &path() const { return file; }
  const std::vector<QuantizedLinear> &linears() const { return found; }
  /// Initializers that no quantized linear reads (float MatMul weights,
  /// norms, ...): not compiled; listed in the report.
  const std::vector<std::string> &otherInitializers() const { return others; }
  /// The model file and every external data file it reads, for hashing.
  const std::vector<std::string> &files() const { return fileList; }
  /// "onnxruntime.quantize 1.32.0, opset 21, com.microsoft 1".
  const std::string &description() const { return about; }
  /// Gives the pages of the tensors `l` reads back (releaseMappedPages).
  void release(const QuantizedLinear &l) const;

  struct State; ///< the parsed protobuf and the data it points into

private:
  Model();
  /// Fills `found` and `others` from the graph (ONNXLinears.cpp).
  Status findLinears();
  std::unique_ptr<State> state;
  std::string file, about;
  std::vector<QuantizedLinear> found;
  std::vector<std::string> others, fileList;
};

} // namespace qtensor::onnxmodel

#endif // QTENSOR_FORMATS_ONNX_H
