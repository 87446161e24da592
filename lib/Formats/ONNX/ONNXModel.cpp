//===- ONNXModel.cpp - Parsing an ONNX model and its tensor data ----------===//
//
// The protobuf is parsed by the ONNX project's own generated code (Debian's
// libonnx-dev), bounded; initializers become TensorViews into their
// raw_data or into external data files opened under the model's directory
// (ONNX.h). Finding the linears is ONNXLinears.cpp.
//
//===----------------------------------------------------------------------===//

#include "ONNXDetail.h"

#include "qtensor/Formats/ArtifactPath.h"
#include "qtensor/Support/CheckedMath.h"
#include "qtensor/Support/MappedFile.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <openssl/evp.h>

#include <cerrno>
#include <climits>
#include <cstring>

using namespace qtensor;
using namespace qtensor::onnxmodel;
using safetensors::DType;
using safetensors::TensorView;

namespace {

/// Elements of one tensor at most (2^40: far beyond any weight, far below
/// an overflow of any byte count derived from it).
constexpr uint64_t kMaxElements = uint64_t(1) << 40;

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// SHA-1 of a mapped file as 40 lowercase hex digits (ONNX's `checksum`).
Expected<std::string> sha1Hex(const uint8_t *data, size_t size) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data, size, digest, &length, EVP_sha1(), nullptr) != 1)
    return makeError("sha1: OpenSSL failed");
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

} // namespace

Expected<TensorKind> onnxmodel::kindOf(int32_t dataType) {
  switch (dataType) {
  case ::onnx::TensorProto::FLOAT:
    return TensorKind{DType::F32, false};
  case ::onnx::TensorProto::FLOAT16:
    return TensorKind{DType::F16, false};
  case ::onnx::TensorProto::BFLOAT16:
    return TensorKind{DType::BF16, false};
  case ::onnx::TensorProto::UINT8:
    return TensorKind{DType::U8, false};
  case ::onnx::TensorProto::INT8:
    return TensorKind{DType::I8, false};
  case ::onnx::TensorProto::INT32:
    return TensorKind{DType::I32, false};
  case ::onnx::TensorProto::INT64:
    return TensorKind{DType::I64, false};
  case kUInt4:
    return TensorKind{DType::U8, true};
  case kInt4:
    return TensorKind{DType::I8, true};
  }
  return makeError("data type ", dataType,
                   " is not one this reader takes (float, float16, "
                   "bfloat16, uint8, int8, int32, int64, uint4, int4)");
}

Model::Model() : state(std::make_unique<State>()) {}
Model::Model(Model &&) noexcept = default;
Model &Model::operator=(Model &&) noexcept = default;
Model::~Model() = default;

Expected<const MappedFile *>
Model::State::externalFile(const std::string &location,
                           const std::string &context) {
  if (auto it = external.find(location); it != external.end())
    return &it->second;
  if (Status s = artifact::checkArtifactPath(location); !s)
    return makeError(context, ": external data: ", s.message());
  if (!root) {
    auto r = artifact::ArtifactRoot::open(directory);
    if (!r)
      return makeError(context, ": ", r.message());
    root = std::make_unique<artifact::ArtifactRoot>(r.take());
  }
  auto opened = root->openFile(location);
  if (!opened)
    return makeError(context, ": external data: ", opened.message());
  auto mapped =
      MappedFile::fromDescriptor(opened->fd.release(), root->display(location));
  if (!mapped)
    return makeError(context, ": external data: ", mapped.message());
  files.push_back(root->display(location));
  return &external.emplace(location, mapped.take()).first->second;
}

Expected<const TensorView *> Model::State::view(const ::onnx::TensorProto &t,
                                                const std::string &context) {
  if (auto it = views.find(t.name()); it != views.end())
    return it->second;
  const std::string name = context + ": initializer " + t.name();
  auto kind = kindOf(t.data_type());
  if (!kind)
    return makeError(name, ": ", kind.message());
  TensorView v;
  v.name = t.name();
  v.dtype = kind->dtype;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return makeError(name, ": dimension ", d, " is negative");
    v.shape.push_back(d);
  }
  auto count = checkedElementCount(v.shape, kMaxElements);
  if (!count)
    return makeError(name, ": more than 2^40 elements");
  const uint64_t bytes = kind->nibbles
                             ? ceilDiv(*count, 2)
                             : *count * safetensors::dtypeSize(kind->dtype);
  if (t.has_segment())
    return makeError(name, ": segmented tensors are not read");

  if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
    std::string location;
    std::optional<uint64_t> offset, length;
    std::string checksum;
    for (const ::onnx::StringStringEntryProto &e : t.external_data()) {
      auto number = [&](std::optional<uint64_t> &out) -> Status {
        const std::string &s = e.value();
        char *end = nullptr;
        errno = 0;
        unsigned long long x = std::strtoull(s.c_str(), &end, 10);
        if (s.empty() || s[0] < '0' || s[0] > '9' || *end != '\0' ||
            errno == ERANGE)
          return makeError(name, ": external_data ", e.key(), " \"", s,
                           "\" is not a byte count");
        out = uint64_t(x);
        return Status::ok();
      };
      if (e.key() == "location")
        location = e.value();
      else if (e.key() == "offset")
        QTENSOR_TRY(number(offset));
      else if (e.key() == "length")
        QTENSOR_TRY(number(length));
      else if (e.key() == "checksum")
        checksum = e.value();
      else
        return makeError(name, ": external_data key \"", e.key(),
                         "\" is not one of location, offset, length, "
                         "checksum");
    }
    if (location.empty())
      return makeError(name, ": external data without a location");
    if (length && *length != bytes)
      return makeError(name, ": external_data length ", *length, " bytes, but ",
                       bytes, " bytes hold its ",
                       safetensors::dtypeName(kind->dtype), " ",
                       shapeToString(v.shape));
    QTENSOR_ASSIGN_OR_RETURN(const MappedFile *f, externalFile(location, name));
    uint64_t at = offset.value_or(0);
    auto end = checkedAdd(at, bytes);
    if (!end || *end > f->size())
      return makeError(name, ": external data [", at, ", ", at, " + ", bytes,
                       ") is outside ", f->path(), " (", f->size(), " bytes)");
    if (!checksum.empty()) {
      auto &known = checksums[location];
      if (known.empty()) {
        QTENSOR_ASSIGN_OR_RETURN(known, sha1Hex(f->data(), size_t(f->size())));
      }
      if (known != checksum)
        return makeError(name, ": external data ", f->path(), " has SHA-1 ",
                         known, ", the model's checksum is ", checksum);
    }
    v.data = f->data() + at;
  } else if (t.has_raw_data()) {
    if (t.raw_data().size() != bytes)
      return makeError(name, ": raw_data holds ", uint64_t(t.raw_data().size()),
                       " bytes, its ", safetensors::dtypeName(kind->dtype),
                       kind->nibbles ? " (4-bit) " : " ",
                       shapeToString(v.shape), " needs ", bytes);
    v.data = reinterpret_cast<const uint8_t *>(t.raw_data().data());
  } else if (kind->dtype == DType::F32 && !kind->nibbles &&
             uint64_t(t.float_data_size()) == *count) {
    v.data = reinterpret_cast<const uint8_t *>(t.float_data().data());
  } else if (kind->dtype == DType::I32 &&
             uint64_t(t.int32_data_size()) == *count) {
    v.data = reinterpret_cast<const uint8_t *>(t.int32_data().data());
  } else if ((kind->dtype == DType::U8 || kind->dtype == DType::I8) &&
             !kind->nibbles && uint64_t(t.int32_data_size()) == *count) {
    // One element per int32 entry: narrowed into a buffer of our own.
    std::vector<uint8_t> &buffer = owned.emplace_back(size_t(*count));
    for (int64_t i = 0; i < t.int32_data_size(); ++i) {
      int32_t x = t.int32_data(int(i));
      bool ok =
          kind->dtype == DType::U8 ? x >= 0 && x <= 255 : x >= -128 && x <= 127;
      if (!ok)
        return makeError(name, ": int32_data[", i, "] = ", x,
                         " is outside the range of ",
                         safetensors::dtypeName(kind->dtype));
      buffer[size_t(i)] = uint8_t(x);
    }
    v.data = buffer.data();
  } else {
    return makeError(name, ": no data this reader takes (raw_data, external "
                           "data, or float_data/int32_data with one entry "
                           "per element)");
  }
  v.begin = 0;
  v.end = bytes;
  const TensorView *out = &storage.emplace_back(std::move(v));
  views.emplace(t.name(), out);
  return out;
}

Expected<Model> Model::open(const std::string &path, const Limits &limits) {
  QTENSOR_ASSIGN_OR_RETURN(MappedFile bytes, MappedFile::open(path));
  // The parse copies what it keeps; the mapping goes when this returns.
  return fromBuffer(bytes.data(), size_t(bytes.size()), path, directoryOf(path),
                    limits);
}

Expected<Model> Model::fromBuffer(const uint8_t *data, size_t size,
                                  const std::string &path,
                                  const std::string &directory,
                                  const Limits &limits) {
  Model m;
  m.file = path;
  m.state->directory = directory;
  m.fileList.push_back(path);
  if (size > limits.maxModelBytes || size > size_t(INT_MAX))
    return makeError(path, ": ", uint64_t(size),
                     " bytes; an ONNX model file holds at most 2 GiB (a "
                     "larger model keeps its weights in external data)");
  google::protobuf::io::ArrayInputStream raw(data, int(size));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetRecursionLimit(limits.recursionLimit);
  coded.SetTotalBytesLimit(INT_MAX);
  m.state->model = std::make_unique<::onnx::ModelProto>();
  if (!m.state->model->ParseFromCodedStream(&coded) ||
      !coded.ConsumedEntireMessage())
    return makeError(path, ": not an ONNX model (the file does not parse "
                           "as an onnx.ModelProto protobuf)");
  const ::onnx::ModelProto &model = *m.state->model;
  if (!model.has_graph())
    return makeError(path, ": the model has no graph");
  std::string opsets;
  for (const ::onnx::OperatorSetIdProto &o : model.opset_import())
    opsets += std::string(opsets.empty() ? "" : ", ") +
              (o.domain().empty() ? "opset" : o.domain()) + " " +
              std::to_string(o.version());
  m.about =
      (model.producer_name().empty() ? std::string("unknown producer")
                                     : model.producer_name()) +
      (model.producer_version().empty() ? "" : " " + model.producer_version()) +
      (opsets.empty() ? "" : ", " + opsets);
  QTENSOR_TRY(m.findLinears());
  for (const std::string &f : m.state->files)
    m.fileList.push_back(f);
  return m;
}

void Model::release(const QuantizedLinear &l) const {
  for (const TensorView *v : {l.codes, l.scales, l.zeros, l.bias})
    if (v)
      releaseMappedPages(v->data, size_t(v->byteSize()));
}
