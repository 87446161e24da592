//===- ActivationInput.h - An op's activations from a file ------*- C++ -*-===//
//
// `qtc run --input FILE` and embedders feed an op activations from a
// safetensors file: the tensor named after the op (its manifest tensor or
// its trace op name), else "x"; [T, K] or [K] (T = 1) in any float dtype,
// rounded to the op's activation dtype. A row-parallel rank takes its K slice
// of a [T, K_global] input. Every element must be finite in that dtype: a
// NaN or an overflow is refused by position, since every check after it
// would be meaningless.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_ACTIVATIONINPUT_H
#define QTENSOR_RUNTIME_ACTIVATIONINPUT_H

#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Runtime/OpKernel.h"
#include "qtensor/Runtime/Plan.h"
#include "qtensor/Runtime/TensorParallel.h"
#include "qtensor/Support/Expected.h"

namespace qtensor::runtime {

/// One rank's activations for `op` from `file`.
Expected<HostTensor>
activationsFromFile(const safetensors::SafetensorsFile &file, const OpPlan &op);

/// The whole op's activations (every rank's K) for a tensor-parallel group.
Expected<HostTensor>
wholeActivationsFromFile(const safetensors::SafetensorsFile &file,
                         const GroupOp &op);

/// A float64 reference check of T rows on an [n, k] weight keeps T x n
/// outputs and does T x n x k products; past 2^24 outputs or 2^36 products
/// it would take gigabytes and hours, so this refuses it, saying so.
Status checkReferenceFits(int64_t t, int64_t n, int64_t k);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_ACTIVATIONINPUT_H
