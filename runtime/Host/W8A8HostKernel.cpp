//===- W8A8HostKernel.cpp - Per-token int8 activations on the host --------===//
//
// A W8A8 instance is two compiled functions per T (Conversion/W8A8Kernel.h):
// the quantizer turns x [T, K] into i8/u8 codes with a scale (and a
// zero-point) per token, the integer GEMV multiplies them with the int8
// weight. Both take one static T up to 16 and index rows absolutely, so T
// beyond that runs as chunks (each row is quantized on its own: chunking
// changes no bit), on the thread pool. The codes live in per-thread scratch
// that only grows, so the decode loop allocates nothing once warm.
//
//===----------------------------------------------------------------------===//

#include "HostCodeKernel.h"

#include "qtensor/Runtime/HostBackend.h"
#include "qtensor/Runtime/OpKernel.h"

#include <algorithm>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

class HostW8A8Kernel final : public HostCodeKernel {
public:
  using HostCodeKernel::HostCodeKernel;

  Status run(const HostTensor &x, HostTensor &y) override {
    if (Status s = checkActivations(x, activation, instance.k); !s)
      return makeError(instance.id, ": ", s.message());
    if (functions.size() != 2 * instance.entries.size())
      return makeError(instance.id, ": ", functions.size(), " functions for ",
                       instance.entries.size(),
                       " GEMV and quantizer entries each");
    QTENSOR_TRY(zeroedOutput(y, output, x.rows, instance.n));
    return forTokenChunks(
        x.rows, *instance.tokens.max,
        [&](int64_t t0, int64_t rows) { return callRows(x, y, t0, rows); });
  }

private:
  /// Rows [t0, t0 + rows) of x, quantized, into the same rows of y.
  Status callRows(const HostTensor &x, HostTensor &y, int64_t t0,
                  int64_t rows) const {
    const EntryPoint *entry = instance.entryFor(rows);
    if (!entry)
      return makeError(instance.id, ": no entry point takes T = ", rows);
    const size_t e = size_t(entry - instance.entries.data());
    void *gemv = functions[e];
    void *quantize = functions[instance.entries.size() + e];
    // Per-thread scratch: the codes (i8 or u8), a scale and a zero-point
    // per token. Rows of i32/f32 only grow.
    thread_local std::vector<uint8_t> codes;
    thread_local std::vector<float> scales;
    thread_local std::vector<int32_t> zeros;
    codes.resize(size_t(rows) * size_t(instance.k));
    scales.resize(size_t(rows));
    zeros.resize(size_t(rows));
    const bool symmetric = instance.activationQuant->symmetric;
    void *xRows =
        const_cast<uint8_t *>(x.bytes.data()) +
        size_t(t0) * size_t(instance.k) * HostTensor::elementBytes(activation);
    HostOperand quantizerArgs[4] = {{xRows, {rows, instance.k}},
                                    {codes.data(), {rows, instance.k}},
                                    {scales.data(), {rows}},
                                    {zeros.data(), {rows}}};
    QTENSOR_TRY(callMlirCInterface(quantize, quantizerArgs, symmetric ? 3 : 4));
    if (instance.args.size() > kMaxKernelArgs)
      return makeError(instance.id, ": ", instance.args.size(),
                       " arguments, the host ABI takes at most ",
                       kMaxKernelArgs);
    HostOperand args[kMaxKernelArgs];
    size_t count = 0;
    for (const KernelArg &a : instance.args) {
      HostOperand &o = args[count++];
      o.shape = a.shape;
      switch (a.role) {
      case ArgRole::XQ:
        o = {codes.data(), {rows, instance.k}};
        break;
      case ArgRole::SX:
        o = {scales.data(), {rows}};
        break;
      case ArgRole::ZX:
        o = {zeros.data(), {rows}};
        break;
      case ArgRole::W:
        o.data = const_cast<void *>(operands->w);
        break;
      case ArgRole::S:
        o.data = const_cast<void *>(operands->s);
        break;
      case ArgRole::Z:
        o.data = const_cast<void *>(operands->z);
        break;
      case ArgRole::B:
        o.data = const_cast<void *>(operands->b);
        break;
      case ArgRole::Y:
        o = {y.bytes.data() +
                 size_t(t0) * size_t(instance.n) * byteWidth(a.type),
             {rows, instance.n}};
        break;
      default:
        return makeError(instance.id, ": argument ", toString(a.role),
                         " is not a W8A8 GEMV operand");
      }
    }
    return callMlirCInterface(gemv, args, count);
  }
};

} // namespace

std::unique_ptr<OpKernel> qtensor::runtime::makeW8A8HostKernel(
    const KernelInstance &instance, std::vector<void *> functions,
    std::shared_ptr<const WeightOperands> operands, FloatType activation,
    FloatType output) {
  return std::make_unique<HostW8A8Kernel>(
      instance, std::move(functions), std::move(operands), activation, output);
}
