//===- ONNXDetail.h - What the ONNX reader's files share --------*- C++ -*-===//
#ifndef QTENSOR_LIB_FORMATS_ONNX_ONNXDETAIL_H
#define QTENSOR_LIB_FORMATS_ONNX_ONNXDETAIL_H

#include "qtensor/Formats/ArtifactPath.h"
#include "qtensor/Formats/ONNX.h"
#include "qtensor/Support/MappedFile.h"

#include <onnx/onnx_pb.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace qtensor::onnxmodel {

/// TensorProto data types newer than Debian's onnx.proto names (ONNX 1.16).
inline constexpr int32_t kUInt4 = 21, kInt4 = 22;

/// How an ONNX data type is viewed: its dtype, and whether two 4-bit values
/// share each byte (then the dtype says signed or not).
struct TensorKind {
  safetensors::DType dtype;
  bool nibbles;
};

struct Model::State {
  std::unique_ptr<::onnx::ModelProto> model;
  std::string directory; ///< the model's folder: external data stays in it
  std::unique_ptr<artifact::ArtifactRoot> root;
  std::map<std::string, MappedFile> external; ///< by location
  std::map<std::string, std::string> checksums;
  std::vector<std::string> files; ///< external data files, as opened
  std::map<std::string, const safetensors::TensorView *> views;
  std::deque<safetensors::TensorView> storage;
  std::deque<std::vector<uint8_t>> owned;

  /// The view of initializer `t` (checked type, shape and bytes); `context`
  /// names the node that reads it.
  Expected<const safetensors::TensorView *> view(const ::onnx::TensorProto &t,
                                                 const std::string &context);
  Expected<const MappedFile *> externalFile(const std::string &location,
                                            const std::string &context);
};

/// How TensorProto data type `dataType` is viewed; an error names it.
Expected<TensorKind> kindOf(int32_t dataType);

} // namespace qtensor::onnxmodel

#endif // QTENSOR_LIB_FORMATS_ONNX_ONNXDETAIL_H
