//===- OpKernel.cpp - Host kernels and the full-dequant fallback ----------===//

#include "qtensor/Runtime/OpKernel.h"

#include "HostCodeKernel.h"

#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Runtime/HostBackend.h"
#include "qtensor/Support/CheckedMath.h"
#include "qtensor/Support/ThreadPool.h"

#include <algorithm>
#include <cstring>

using namespace qtensor;
using namespace qtensor::runtime;

OpKernel::~OpKernel() = default;

Expected<HostTensor> HostTensor::zeros(FloatType dtype, int64_t rows,
                                       int64_t cols) {
  if (rows < 0 || cols < 0)
    return makeError("tensor shape [", rows, ", ", cols, "] is negative");
  auto bytes =
      checkedElementCount(std::vector<uint64_t>{uint64_t(rows), uint64_t(cols),
                                                elementBytes(dtype)},
                          uint64_t(1) << 40);
  if (!bytes)
    return makeError("tensor shape [", rows, ", ", cols,
                     "] is too large (over 1 TiB)");
  HostTensor t;
  t.dtype = dtype;
  t.rows = rows;
  t.cols = cols;
  t.bytes.assign(size_t(*bytes), 0);
  return t;
}

Expected<HostTensor>
HostTensor::fromDoubles(FloatType dtype, int64_t rows, int64_t cols,
                        const std::vector<double> &values) {
  QTENSOR_ASSIGN_OR_RETURN(HostTensor t, zeros(dtype, rows, cols));
  if (values.size() != t.size())
    return makeError("expected ", t.size(), " values, got ", values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    float f = float(values[i]);
    if (dtype == FloatType::F32) {
      std::memcpy(&t.bytes[4 * i], &f, 4);
      continue;
    }
    // Round from double once: via float would round twice.
    uint16_t h =
        dtype == FloatType::F16
            ? floatToHalfBits(float(roundToFormat(values[i], FloatFormat::F16)))
            : floatToBFloat16Bits(
                  float(roundToFormat(values[i], FloatFormat::BF16)));
    std::memcpy(&t.bytes[2 * i], &h, 2);
  }
  return t;
}

double HostTensor::at(size_t i) const {
  if (dtype == FloatType::F32) {
    float f;
    std::memcpy(&f, &bytes[4 * i], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &bytes[2 * i], 2);
  return dtype == FloatType::F16 ? halfBitsToFloat(h) : bfloat16BitsToFloat(h);
}

std::vector<double> HostTensor::toDoubles() const {
  std::vector<double> out(size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = at(i);
  return out;
}

Status qtensor::runtime::zeroedOutput(HostTensor &y, FloatType dtype,
                                      int64_t rows, int64_t cols) {
  // A caller's buffer of the right dtype is reused (assign stays within its
  // capacity).
  if (y.dtype == dtype && rows >= 0 && cols >= 0 &&
      y.bytes.capacity() >=
          size_t(rows) * size_t(cols) * HostTensor::elementBytes(dtype)) {
    y.rows = rows;
    y.cols = cols;
    y.bytes.assign(y.size() * HostTensor::elementBytes(dtype), 0);
    return Status::ok();
  }
  QTENSOR_ASSIGN_OR_RETURN(y, HostTensor::zeros(dtype, rows, cols));
  return Status::ok();
}

Status qtensor::runtime::checkActivations(const HostTensor &x,
                                          FloatType activation, int64_t k) {
  if (x.dtype != activation)
    return makeError("activations are ", qtensor::toString(x.dtype),
                     ", the op reads ", qtensor::toString(activation));
  if (x.cols != k)
    return makeError("activations have K = ", x.cols, ", the op needs ", k);
  if (x.rows < 1)
    return makeError("activations have T = ", x.rows, " rows, need at least 1");
  return Status::ok();
}

Status qtensor::runtime::forTokenChunks(
    int64_t tokens, int64_t chunk,
    const std::function<Status(int64_t, int64_t)> &body) {
  if (chunk < 1)
    return makeError("token chunks of ", chunk, " rows");
  const int64_t chunks = (tokens + chunk - 1) / chunk;
  if (chunks <= 1)
    return body(0, tokens);
  std::vector<Status> results(size_t(chunks), Status::ok());
  defaultThreadPool().parallelFor(size_t(chunks), [&](size_t c) {
    const int64_t t0 = int64_t(c) * chunk;
    results[c] = body(t0, std::min(chunk, tokens - t0));
  });
  for (Status &s : results)
    if (!s)
      return std::move(s);
  return Status::ok();
}

namespace {

class HostNativeKernel final : public HostCodeKernel {
public:
  using HostCodeKernel::HostCodeKernel;

  Status run(const HostTensor &x, HostTensor &y) override {
    QTENSOR_TRY(checkActivations(x, activation, instance.k));
    int64_t t = x.rows;
    const EntryPoint *entry = instance.entryFor(t);
    if (!entry)
      return makeError(instance.id, ": no entry point accepts T = ", t,
                       " (the instance's T range is [", instance.tokens.min,
                       ", ", *instance.tokens.max, "])");
    void *function = functions[size_t(entry - instance.entries.data())];
    // zero_output: the buffer is zero-filled already.
    QTENSOR_TRY(zeroedOutput(y, output, t, instance.n));
    if (!instance.rowSplit)
      return callRows(function, x, y, t, 0, instance.n);
    return forRowRanges(instance.n, instance.k, [&](int64_t n0, int64_t n1) {
      return callRows(function, x, y, t, n0, n1);
    });
  }

private:
  /// Output rows [n0, n1) of y: the weight operands from row n0, y from
  /// column n0 with the whole output's row stride (a row-split kernel's
  /// ABI; other kernels are only called on [0, N)).
  Status callRows(void *function, const HostTensor &x, HostTensor &y, int64_t t,
                  int64_t n0, int64_t n1) const {
    // In place: the decode loop calls this hundreds of times a step.
    if (instance.args.size() > kMaxKernelArgs)
      return makeError(instance.id, ": ", instance.args.size(),
                       " arguments, the host ABI takes at most ",
                       kMaxKernelArgs);
    HostOperand args[kMaxKernelArgs];
    size_t count = 0;
    for (const KernelArg &a : instance.args) {
      HostOperand &o = args[count++];
      o.shape = a.shape;
      // Bytes of one row (dimension 0) of this argument.
      size_t rowBytes = byteWidth(a.type);
      for (size_t d = 1; d < a.shape.size(); ++d)
        rowBytes *= size_t(a.shape[d]);
      const size_t skip = size_t(n0) * rowBytes;
      auto from = [&](const void *base) {
        return const_cast<uint8_t *>(static_cast<const uint8_t *>(base)) + skip;
      };
      switch (a.role) {
      case ArgRole::X:
        o.shape[0] = t;
        o.data = const_cast<uint8_t *>(x.bytes.data());
        break;
      case ArgRole::Y:
        o.shape = {t, n1 - n0};
        o.strides = {instance.n, 1};
        o.data = y.bytes.data() + size_t(n0) * byteWidth(a.type);
        break;
      case ArgRole::W:
        o.shape[0] = n1 - n0;
        o.data = from(operands->w);
        break;
      case ArgRole::S:
        o.shape[0] = n1 - n0;
        o.data = from(operands->s);
        break;
      case ArgRole::S2:
        o.shape[0] = n1 - n0;
        o.data = from(operands->s2);
        break;
      case ArgRole::Z:
        o.shape[0] = n1 - n0;
        o.data = from(operands->z);
        break;
      case ArgRole::Z2:
        o.shape[0] = n1 - n0;
        o.data = from(operands->z2);
        break;
      case ArgRole::B:
        o.shape[0] = n1 - n0;
        o.data = from(operands->b);
        break;
      default:
        return makeError(instance.id, ": argument ", toString(a.role),
                         " is a mixed_2416 stream, not an affine operand");
      }
    }
    return callMlirCInterface(function, args, count);
  }
};

class FullDequantKernel final : public OpKernel {
public:
  FullDequantKernel(std::vector<float> weight, int64_t n, int64_t k,
                    std::vector<double> bias, FloatType activation,
                    FloatType output)
      : weight(std::move(weight)), bias(std::move(bias)), n(n), k(k),
        activation(activation), output(output) {}

  Status run(const HostTensor &x, HostTensor &y) override {
    QTENSOR_TRY(checkActivations(x, activation, k));
    std::vector<double> xs = x.toDoubles();
    std::vector<double> ys(size_t(x.rows) * size_t(n));
    for (int64_t t = 0; t < x.rows; ++t)
      for (int64_t o = 0; o < n; ++o) {
        const double *xr = &xs[size_t(t) * size_t(k)];
        const float *wr = &weight[size_t(o) * size_t(k)];
        double acc = 0;
        for (int64_t i = 0; i < k; ++i)
          acc += xr[i] * double(wr[i]);
        ys[size_t(t) * size_t(n) + size_t(o)] =
            acc + (bias.empty() ? 0.0 : bias[size_t(o)]);
      }
    QTENSOR_ASSIGN_OR_RETURN(y, HostTensor::fromDoubles(output, x.rows, n, ys));
    return Status::ok();
  }
  const char *backend() const override {
    return "host (full-dequant fallback)";
  }
  const std::string &name() const override { return id; }

private:
  std::vector<float> weight;
  std::vector<double> bias;
  int64_t n, k;
  FloatType activation, output;
  std::string id = "full_dequant_linear";
};

/// Act-order: x's columns gathered into the group order the weight's
/// kernel layout stores K in, then the kernel. The gathered copy lives in
/// a per-thread buffer that only grows, so the decode loop allocates
/// nothing once warm, and concurrent callers do not share it.
class PermutedInputKernel final : public OpKernel {
public:
  PermutedInputKernel(std::vector<int64_t> permutation,
                      std::unique_ptr<OpKernel> inner)
      : permutation(std::move(permutation)), inner(std::move(inner)) {}

  Status run(const HostTensor &x, HostTensor &y) override {
    const int64_t k = int64_t(permutation.size());
    if (x.cols != k)
      return makeError(inner->name(), ": x has ", x.cols,
                       " columns, the permutation of K ", k);
    thread_local HostTensor gathered;
    const size_t width = HostTensor::elementBytes(x.dtype);
    gathered.dtype = x.dtype;
    gathered.rows = x.rows;
    gathered.cols = x.cols;
    gathered.bytes.resize(x.bytes.size());
    for (int64_t t = 0; t < x.rows; ++t) {
      const uint8_t *from = x.bytes.data() + size_t(t) * size_t(k) * width;
      uint8_t *to = gathered.bytes.data() + size_t(t) * size_t(k) * width;
      for (int64_t i = 0; i < k; ++i)
        std::memcpy(to + size_t(i) * width,
                    from + size_t(permutation[size_t(i)]) * width, width);
    }
    return inner->run(gathered, y);
  }
  const char *backend() const override { return inner->backend(); }
  const std::string &name() const override { return inner->name(); }

private:
  std::vector<int64_t> permutation;
  std::unique_ptr<OpKernel> inner;
};

} // namespace

std::unique_ptr<OpKernel>
qtensor::runtime::makePermutedInputKernel(std::vector<int64_t> permutation,
                                          std::unique_ptr<OpKernel> inner) {
  return std::make_unique<PermutedInputKernel>(std::move(permutation),
                                               std::move(inner));
}

std::unique_ptr<OpKernel> qtensor::runtime::makeHostNativeKernel(
    const KernelInstance &instance, std::vector<void *> functions,
    std::shared_ptr<const WeightOperands> operands, FloatType activation,
    FloatType output) {
  return std::make_unique<HostNativeKernel>(
      instance, std::move(functions), std::move(operands), activation, output);
}

std::unique_ptr<OpKernel> qtensor::runtime::makeFullDequantKernel(
    std::vector<float> weight, int64_t n, int64_t k, std::vector<double> bias,
    FloatType activation, FloatType output) {
  return std::make_unique<FullDequantKernel>(
      std::move(weight), n, k, std::move(bias), activation, output);
}
