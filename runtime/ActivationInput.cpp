//===- ActivationInput.cpp - An op's activations from a file ------------===//

#include "qtensor/Runtime/ActivationInput.h"

#include <cmath>
#include <string>
#include <vector>

namespace qtensor::runtime {
namespace {

/// The first tensor of --input named in `names`, as [rows, cols].
struct InputTensor {
  const safetensors::TensorView *view = nullptr;
  std::string path; ///< the file, for errors
  int64_t rows = 1, cols = 0;
};
Expected<InputTensor> findInput(const safetensors::SafetensorsFile &file,
                                const std::vector<std::string> &names) {
  InputTensor in;
  for (const std::string &name : names)
    if ((in.view = file.find(name)))
      break;
  if (!in.view) {
    std::string list;
    for (size_t i = 0; i < names.size(); ++i)
      list += std::string(i ? (i + 1 == names.size() ? " or " : ", ") : "") +
              "\"" + names[i] + "\"";
    return makeError(file.path(), ": no tensor named ", list);
  }
  const safetensors::TensorView &v = *in.view;
  if (!safetensors::isFloatDType(v.dtype))
    return makeError(file.path(), ": tensor \"", v.name, "\" is ",
                     safetensors::dtypeName(v.dtype),
                     ", expected a float dtype");
  if (v.shape.size() == 1) {
    in.cols = v.shape[0];
  } else if (v.shape.size() == 2) {
    in.rows = v.shape[0];
    in.cols = v.shape[1];
  } else {
    return makeError(file.path(), ": tensor \"", v.name, "\" has shape ",
                     shapeToString(v.shape), ", expected [T, K] or [K]");
  }
  if (in.rows < 1)
    return makeError(file.path(), ": tensor \"", v.name, "\" has no rows");
  in.path = file.path();
  return in;
}

/// Columns [from, from + k) of every row of `in`, rounded to `dtype`.
Expected<HostTensor> inputColumns(const InputTensor &in, int64_t from,
                                  int64_t k, FloatType dtype) {
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> all,
                           safetensors::toFloat64(*in.view));
  std::vector<double> x;
  x.reserve(size_t(in.rows) * size_t(k));
  for (int64_t r = 0; r < in.rows; ++r)
    x.insert(x.end(), all.begin() + r * in.cols + from,
             all.begin() + r * in.cols + from + k);
  QTENSOR_ASSIGN_OR_RETURN(HostTensor t,
                           HostTensor::fromDoubles(dtype, in.rows, k, x));
  // A NaN, an infinity, or a value the activation type cannot hold would
  // make every check below meaningless: refuse it here, by element.
  for (size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t.at(i)))
      return makeError(in.path, ": tensor \"", in.view->name, "\" element [",
                       i / size_t(k), ", ", from + int64_t(i % size_t(k)),
                       "] = ", x[i], " is not a finite ", toString(dtype),
                       " value");
  return t;
}

/// One rank's activations from --input (see the usage text).
} // namespace

Expected<HostTensor>
activationsFromFile(const safetensors::SafetensorsFile &file,
                    const OpPlan &op) {
  QTENSOR_ASSIGN_OR_RETURN(InputTensor in,
                           findInput(file, {op.tensor, op.op, "x"}));
  // A row-parallel rank reads its slice of the whole K.
  int64_t from = 0;
  if (in.cols != op.k()) {
    if (op.signature.topology == kernels::Topology::Row &&
        in.cols == op.signature.k) {
      from = op.slice.kOffset;
    } else {
      return makeError(file.path(), ": tensor \"", in.view->name,
                       "\" has K = ", in.cols, ", op \"", op.tensor,
                       "\" needs ", op.k());
    }
  }
  return inputColumns(in, from, op.k(), op.activation);
}

/// The whole op's activations from --input, for --rank all.
Expected<HostTensor>
wholeActivationsFromFile(const safetensors::SafetensorsFile &file,
                         const GroupOp &op) {
  QTENSOR_ASSIGN_OR_RETURN(InputTensor in, findInput(file, {op.op, "x"}));
  if (in.cols != op.k)
    return makeError(file.path(), ": tensor \"", in.view->name,
                     "\" has K = ", in.cols, ", op \"", op.op,
                     "\" (the whole weight) needs ", op.k);
  return inputColumns(in, 0, op.k, op.activation);
}

Status checkReferenceFits(int64_t t, int64_t n, int64_t k) {
  constexpr uint64_t kMaxOutputs = uint64_t(1) << 24;
  constexpr uint64_t kMaxProducts = uint64_t(1) << 36;
  uint64_t outputs = uint64_t(t) * uint64_t(n);
  if (outputs > kMaxOutputs || outputs * uint64_t(k) > kMaxProducts)
    return makeError(
        "--check at T = ", t, " on a [", n, ", ", k, "] weight needs ", outputs,
        " float64 reference outputs "
        "and ",
        outputs * uint64_t(k), " products (limits ", kMaxOutputs, " and ",
        kMaxProducts, "): check with fewer --tokens, or run without --check");
  return Status::ok();
}

} // namespace qtensor::runtime
