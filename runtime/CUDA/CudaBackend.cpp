//===- CudaBackend.cpp - Running compiled GPU kernels ---------------------===//

#include "qtensor/Runtime/CudaBackend.h"

#include "qtensor/Support/CheckedMath.h"

#include <algorithm>

using namespace qtensor;
using namespace qtensor::runtime;

Expected<KernelParams> KernelParams::build(const KernelInstance &instance,
                                           const DeviceOperands &weights,
                                           CudaDevice::DevicePtr x,
                                           CudaDevice::DevicePtr y,
                                           int64_t tokens) {
  KernelParams p;
  for (const KernelArg &a : instance.args) {
    CudaDevice::DevicePtr ptr = 0;
    // A mixed_2416 kernel reads every weight operand but its bias from
    // `streams` (its s2 and z2 are the second level of its own family).
    const bool stream = instance.mixed && a.role != ArgRole::X &&
                        a.role != ArgRole::Y && a.role != ArgRole::B;
    if (stream) {
      if (auto s = weights.streams.find(a.role); s != weights.streams.end())
        ptr = s->second.ptr;
    } else {
      switch (a.role) {
      case ArgRole::X:
        ptr = x;
        break;
      case ArgRole::Y:
        ptr = y;
        break;
      case ArgRole::W:
        ptr = weights.w;
        break;
      case ArgRole::S:
        ptr = weights.s;
        break;
      case ArgRole::Z:
        ptr = weights.z;
        break;
      case ArgRole::B:
        ptr = weights.b;
        break;
      case ArgRole::S2:
        ptr = weights.s2;
        break;
      case ArgRole::Z2:
        ptr = weights.z2;
        break;
      default: // a mixed_2416 stream in a record without `mixed`
        break;
      }
    }
    if (!ptr)
      return makeError(instance.id, ": argument ", toString(a.role),
                       " has no device buffer");
    std::vector<int64_t> shape = a.shape;
    if (a.role == ArgRole::X || a.role == ArgRole::Y)
      shape[0] = tokens;
    // A stream's -1 is its own length.
    for (int64_t &d : shape)
      if (d == kDynamic) {
        auto s = weights.streams.find(a.role);
        if (s == weights.streams.end())
          return makeError(instance.id, ": argument ", toString(a.role),
                           " has a stream length but no stream");
        d = s->second.elements;
      }
    p.values.push_back(int64_t(ptr)); // allocated
    p.values.push_back(int64_t(ptr)); // aligned
    p.values.push_back(0);            // offset
    for (int64_t d : shape)
      p.values.push_back(d);
    int64_t stride = 1;
    std::vector<int64_t> strides(shape.size());
    for (size_t j = shape.size(); j-- > 0;) {
      strides[j] = stride;
      stride *= shape[j];
    }
    p.values.insert(p.values.end(), strides.begin(), strides.end());
  }
  for (int64_t &v : p.values)
    p.ptrs.push_back(&v);
  return p;
}

namespace {

class CudaNativeKernel final : public OpKernel {
public:
  CudaNativeKernel(CudaDevice &device, const KernelInstance &instance,
                   std::vector<CudaDevice::Function> functions,
                   DeviceOperands operands, FloatType activation,
                   FloatType output, MemoryLedger &ledger)
      : device(device), instance(instance), functions(std::move(functions)),
        operands(operands), activation(activation), output(output),
        ledger(ledger) {}

  Status run(const HostTensor &x, HostTensor &y) override {
    if (x.dtype != activation || x.cols != instance.k || x.rows < 1)
      return makeError(instance.id, ": activations must be [T, ", instance.k,
                       "] ", qtensor::toString(activation));
    int64_t t = x.rows;
    // The mixed 2/4/16 GEMV's T is static up to its largest entry: more
    // rows run as chunks of it.
    if (instance.mixed && t > *instance.tokens.max)
      return runInChunks(x, y);
    const EntryPoint *entry = instance.entryFor(t);
    if (!entry)
      return makeError(instance.id, ": no entry point accepts T = ", t);
    CudaDevice::Function f = functions[size_t(entry - instance.entries.data())];
    QTENSOR_ASSIGN_OR_RETURN(HostTensor out,
                             HostTensor::zeros(output, t, instance.n));
    std::string what = instance.id + " T=" + std::to_string(t);
    // Staging buffers are per call: workspace, released on every path.
    QTENSOR_ASSIGN_OR_RETURN(CudaDevice::DevicePtr dx,
                             device.allocate(x.bytes.size(), what + " x"));
    auto dy = device.allocate(out.bytes.size(), what + " y");
    if (!dy) {
      (void)device.free(dx);
      return dy.error();
    }
    std::string item = "staging " + what;
    (void)ledger.add(MemoryCategory::Workspace, item,
                     x.bytes.size() + out.bytes.size());
    Status s = launch(f, x, out, dx, *dy, t, what);
    (void)ledger.release(MemoryCategory::Workspace, item);
    Status fx = device.free(dx), fy = device.free(*dy);
    if (!s)
      return s;
    if (!fx)
      return fx;
    if (!fy)
      return fy;
    y = std::move(out);
    return Status::ok();
  }
  const char *backend() const override { return "cuda"; }
  const std::string &name() const override { return instance.id; }

private:
  Status runInChunks(const HostTensor &x, HostTensor &y) {
    const int64_t t = x.rows, chunk = *instance.tokens.max;
    const size_t inRow = size_t(x.cols) * HostTensor::elementBytes(x.dtype);
    const size_t outRow = size_t(instance.n) * HostTensor::elementBytes(output);
    QTENSOR_ASSIGN_OR_RETURN(HostTensor out,
                             HostTensor::zeros(output, t, instance.n));
    HostTensor part{x.dtype, 0, x.cols, {}}, partOut;
    for (int64_t t0 = 0; t0 < t; t0 += chunk) {
      part.rows = std::min(chunk, t - t0);
      part.bytes.assign(x.bytes.begin() + ptrdiff_t(size_t(t0) * inRow),
                        x.bytes.begin() +
                            ptrdiff_t(size_t(t0 + part.rows) * inRow));
      QTENSOR_TRY(run(part, partOut));
      std::copy(partOut.bytes.begin(), partOut.bytes.end(),
                out.bytes.begin() + ptrdiff_t(size_t(t0) * outRow));
    }
    y = std::move(out);
    return Status::ok();
  }

  Status launch(CudaDevice::Function f, const HostTensor &x, HostTensor &out,
                CudaDevice::DevicePtr dx, CudaDevice::DevicePtr dy, int64_t t,
                const std::string &what) {
    QTENSOR_TRY(
        device.copyToDevice(dx, x.bytes.data(), x.bytes.size(), what + " x"));
    if (instance.zeroOutput)
      QTENSOR_TRY(device.zero(dy, out.bytes.size(), what + " y"));
    QTENSOR_ASSIGN_OR_RETURN(
        KernelParams params,
        KernelParams::build(instance, operands, dx, dy, t));
    const LaunchConfig &l = *instance.launch;
    QTENSOR_TRY(device.launch(f, l.gridFor(t), l.block, l.sharedBytes,
                              params.pointers(), what));
    QTENSOR_TRY(device.synchronize(what));
    return device.copyToHost(out.bytes.data(), dy, out.bytes.size(),
                             what + " y");
  }

  CudaDevice &device;
  const KernelInstance &instance;
  std::vector<CudaDevice::Function> functions;
  DeviceOperands operands;
  FloatType activation, output;
  MemoryLedger &ledger;
};

} // namespace

std::unique_ptr<OpKernel> qtensor::runtime::makeCudaNativeKernel(
    CudaDevice &device, const KernelInstance &instance,
    std::vector<CudaDevice::Function> functions, DeviceOperands operands,
    FloatType activation, FloatType output, MemoryLedger &ledger) {
  return std::make_unique<CudaNativeKernel>(device, instance,
                                            std::move(functions), operands,
                                            activation, output, ledger);
}
