//===- HostCodeKernel.h - What every compiled host kernel holds -*- C++ -*-===//
//
// The state of an OpKernel that calls compiled host code (the affine host
// GEMM or twin, the mixed 2/4/16 GEMV, the W8A8 GEMV): its record, the
// addresses of its entry points, the weight operands it reads, and the
// dtypes of x and y. Each family adds only how it calls its code.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_HOST_HOSTCODEKERNEL_H
#define QTENSOR_RUNTIME_HOST_HOSTCODEKERNEL_H

#include "qtensor/Runtime/KernelInstance.h"
#include "qtensor/Runtime/OpKernel.h"

#include <memory>
#include <vector>

namespace qtensor::runtime {

class HostCodeKernel : public OpKernel {
public:
  HostCodeKernel(const KernelInstance &instance, std::vector<void *> functions,
                 std::shared_ptr<const WeightOperands> operands,
                 FloatType activation, FloatType output)
      : instance(instance), functions(std::move(functions)),
        operands(std::move(operands)), activation(activation), output(output) {}

  const char *backend() const override { return "host"; }
  const std::string &name() const override { return instance.id; }

protected:
  const KernelInstance &instance;
  std::vector<void *> functions;
  std::shared_ptr<const WeightOperands> operands;
  FloatType activation, output;
};

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_HOST_HOSTCODEKERNEL_H
