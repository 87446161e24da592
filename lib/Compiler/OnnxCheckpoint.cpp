//===- OnnxCheckpoint.cpp - The quantized linears of an ONNX model --------===//
//
// `qtc compile model.onnx --quant keep`: every quantized linear the reader
// finds (Formats/ONNX.h) becomes a linear whose codes are the file's,
// named by its weight's initializer; a linear excluded (or whose codes no
// kernel of the target reads, under --fallback allow) is decoded and kept
// float, as a GPTQ checkpoint's would be. The rest of the graph (float
// MatMuls, activations, norms) is not compiled: its initializers are
// listed as unreferenced, and the artifact has no decoder program.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "CheckpointDetail.h"

#include "qtensor/Support/MappedFile.h"

namespace qtensor::compiler {

bool isOnnxPath(const std::string &path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

Expected<Checkpoint> Checkpoint::openOnnx(const std::string &path,
                                          WeightSelection &selection) {
  Checkpoint cp;
  cp.kind = "onnx";
  cp.cfg.architecture = "onnx";
  std::string base = path.substr(path.find_last_of('/') + 1);
  cp.cfg.name = base.substr(0, base.rfind('.'));
  cp.noDecoder = "an ONNX model is compiled as its quantized linears, each "
                 "run on its own (qtc run --op); the rest of its graph is "
                 "not compiled";
  QTENSOR_ASSIGN_OR_RETURN(onnxmodel::Model model,
                           onnxmodel::Model::open(path));
  cp.onnx = std::make_shared<onnxmodel::Model>(std::move(model));
  const onnxmodel::Model &m = *cp.onnx;
  cp.inputs = m.files();
  cp.quantText = "onnx (" + m.description() + ")";
  if (m.linears().empty())
    return makeError(path, ": no quantized linear in the graph (a "
                           "com.microsoft MatMulNBits, or a MatMul reading a "
                           "DequantizeLinear of an initializer); float ONNX "
                           "weights are not compiled");

  for (const onnxmodel::QuantizedLinear &q : m.linears()) {
    auto source = std::make_shared<PackedSource>();
    source->module = q.node;
    source->descriptor = q.descriptor;
    source->unpack = [&q] { return onnxmodel::unpack(q); };
    source->release = [model = cp.onnx.get(), &q] { model->release(q); };
    SourceLinear linear;
    linear.layer = -1;
    linear.role = "linear";
    linear.name = q.weight;
    linear.weight.name = q.weight;
    linear.weight.packed = source.get();
    linear.weight.shape = {q.n, q.k};
    linear.weight.dtype = q.storedType;
    if (q.bias) {
      SourceTensor bias;
      bias.name = q.bias->name;
      bias.view = q.bias;
      bias.shape = q.bias->shape;
      bias.dtype = std::string(safetensors::dtypeName(q.bias->dtype));
      linear.bias = bias;
    }
    cp.packedSources.push_back(std::move(source));
    QTENSOR_ASSIGN_OR_RETURN(
        SelectionDecision d,
        selection.decideStored(linear.name, TensorKind::Linear,
                               linear.weight.dtype,
                               &linear.weight.packed->descriptor.descriptor));
    if (d.quantize) {
      if (linear.bias)
        selection.noteBias(linear.bias->name);
      cp.lin.push_back(std::move(linear));
      continue;
    }
    // Kept float: its weight (decoded) and bias are plain tensors.
    cp.rest.push_back(linear.weight);
    cp.keptList.push_back({linear.name, TensorKind::Linear, d.reason});
    if (linear.bias) {
      cp.rest.push_back(*linear.bias);
      cp.keptList.push_back({linear.bias->name, TensorKind::Other,
                             "the bias of " + linear.name + ", kept float"});
    }
    cp.floatLin.push_back(std::move(linear));
  }
  cp.unused = m.otherInitializers();
  QTENSOR_TRY(selection.checkAllPatternsUsed(path));
  cp.digest = SourceDigest::start(cp.inputs);
  return cp;
}

} // namespace qtensor::compiler
