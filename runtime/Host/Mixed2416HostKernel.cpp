//===- Mixed2416HostKernel.cpp - The mixed 2/4/16 GEMV on the host --------===//
//
// The compiled mixed_2416 GEMV (Conversion/Mixed2416Kernel.h) has one entry
// point per T up to 16 and reads its streams by absolute row, so a call
// covers the whole N and T beyond the largest entry runs as consecutive
// chunks of rows: the kernel's result for each chunk is exactly what one
// call with those rows gives, so chunking changes no bit, and chunks run on
// the thread pool.
//
//===----------------------------------------------------------------------===//

#include "HostCodeKernel.h"

#include "qtensor/Runtime/HostBackend.h"
#include "qtensor/Runtime/OpKernel.h"

#include <algorithm>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

class HostMixed2416Kernel final : public HostCodeKernel {
public:
  using HostCodeKernel::HostCodeKernel;

  Status run(const HostTensor &x, HostTensor &y) override {
    if (Status s = checkActivations(x, activation, instance.k); !s)
      return makeError(instance.id, ": ", s.message());
    QTENSOR_TRY(zeroedOutput(y, output, x.rows, instance.n));
    return forTokenChunks(
        x.rows, *instance.tokens.max,
        [&](int64_t t0, int64_t rows) { return callRows(x, y, t0, rows); });
  }

private:
  /// Rows [t0, t0 + rows) of x into the same rows of y.
  Status callRows(const HostTensor &x, HostTensor &y, int64_t t0,
                  int64_t rows) const {
    const EntryPoint *entry = instance.entryFor(rows);
    if (!entry)
      return makeError(instance.id, ": no entry point takes T = ", rows);
    void *function = functions[size_t(entry - instance.entries.data())];
    if (instance.args.size() > kMaxKernelArgs)
      return makeError(instance.id, ": ", instance.args.size(),
                       " arguments, the host ABI takes at most ",
                       kMaxKernelArgs);
    HostOperand args[kMaxKernelArgs];
    size_t count = 0;
    for (const KernelArg &a : instance.args) {
      HostOperand &o = args[count++];
      o.shape = a.shape;
      if (a.role == ArgRole::X) {
        o.shape = {rows, instance.k};
        o.data = const_cast<uint8_t *>(x.bytes.data()) +
                 size_t(t0) * size_t(instance.k) * byteWidth(a.type);
      } else if (a.role == ArgRole::Y) {
        o.shape = {rows, instance.n};
        o.data = y.bytes.data() +
                 size_t(t0) * size_t(instance.n) * byteWidth(a.type);
      } else if (a.role == ArgRole::B) {
        o.data = const_cast<void *>(operands->b);
      } else {
        auto s = operands->streams.find(a.role);
        if (s == operands->streams.end())
          return makeError(instance.id, ": no operand for argument ",
                           toString(a.role));
        // A dynamic length is the stream's own.
        for (size_t d = 0; d < o.shape.size() && d < kMaxMemRefRank; ++d)
          if (o.shape[d] == kDynamic)
            o.shape[d] = s->second.elements;
        o.data = const_cast<void *>(s->second.data);
      }
    }
    return callMlirCInterface(function, args, count);
  }
};

} // namespace

std::unique_ptr<OpKernel> qtensor::runtime::makeMixed2416HostKernel(
    const KernelInstance &instance, std::vector<void *> functions,
    std::shared_ptr<const WeightOperands> operands, FloatType activation,
    FloatType output) {
  return std::make_unique<HostMixed2416Kernel>(
      instance, std::move(functions), std::move(operands), activation, output);
}
