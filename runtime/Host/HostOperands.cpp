//===- HostOperands.cpp - A native kernel's weight operands on the host ---===//

#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Runtime/OpKernel.h"

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

bool aligned(const void *p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

/// `v`'s bytes where the kernel can read them: in place, or an aligned copy.
const void *inPlaceOrCopy(const safetensors::TensorView &v, size_t alignment,
                          const std::string &what, WeightOperands &ops) {
  if (aligned(v.data, alignment))
    return v.data;
  // operator new aligns to at least 16 bytes.
  ops.owned.emplace_back(v.data, v.data + v.byteSize());
  ops.copies.emplace_back("aligned copy " + what, v.byteSize());
  return ops.owned.back().data();
}

/// The elements of an argument whose shapes the planner has checked.
uint64_t elements(const KernelArg &a) {
  uint64_t n = 1;
  for (int64_t d : a.shape)
    n *= uint64_t(d);
  return n;
}

/// The bias operand (b) where the kernel takes one.
Expected<std::shared_ptr<WeightOperands>>
withBias(const KernelInstance &k, const std::string &name,
         const std::vector<double> &bias, std::shared_ptr<WeightOperands> ops);

FloatType floatOf(ArgType t) {
  return t == ArgType::F16    ? FloatType::F16
         : t == ArgType::BF16 ? FloatType::BF16
                              : FloatType::F32;
}

} // namespace

Expected<std::shared_ptr<WeightOperands>> qtensor::runtime::makeHostOperands(
    const KernelInstance &k, const artifact::TensorEntry &entry,
    const OpTensorViews &views, const std::vector<double> &bias) {
  const artifact::QuantizedTensor *q = entry.quantized();
  if (!q || k.isReference())
    return makeError(k.where(), ": no native operands for \"", entry.name,
                     "\"");
  if (!views.codes || (!k.nested && !views.scales))
    return makeError("op \"", entry.name, "\": codes or scales not mapped");
  const safetensors::TensorView &codes = *views.codes;
  auto ops = std::make_shared<WeightOperands>();
  const std::string &name = entry.name;
  if (q->logical.layout.family == k.layout) {
    ops->w = inPlaceOrCopy(codes, 16, name + ".codes", *ops);
    ops->wBytes = codes.byteSize();
  } else {
    auto logical =
        artifact::unpackStoredCodes(q->logical, codes.data, codes.byteSize());
    if (!logical)
      return makeError(name, ".codes: ", logical.message());
    KernelLayoutKind kind;
    if (!parseKernelLayoutFamily(k.layout, kind))
      return makeError(k.where(), ": layout ", k.layout, " is not packable");
    auto packed = artifact::packKernelCodes(q->logical.descriptor, kind,
                                            *logical, k.n, k.k);
    if (!packed)
      return makeError(name, ": repacking into ", k.layout, ": ",
                       packed.message());
    ops->wBytes = packed->size();
    ops->owned.push_back(packed.take());
    ops->w = ops->owned.back().data();
    ops->copies.emplace_back("repacked " + name + ".codes (" + k.layout + ")",
                             ops->wBytes);
    ops->repacked = true;
  }
  // The kernel reads exactly the words its `w` shape says (checked against
  // the layout's geometry by the planner; checked here against the buffer).
  const uint64_t words = elements(*k.arg(ArgRole::W));
  if (words * 4 != ops->wBytes)
    return makeError(name, ".codes: ", ops->wBytes, " bytes, but ", k.id,
                     " reads ", words * 4);
  if (k.nested) {
    // The levels as stored: one-byte codes at any address, the second
    // levels aligned for their 16-bit loads.
    const bool min = k.arg(ArgRole::Z) != nullptr;
    if (!views.scaleCodes || !views.superScales ||
        (min && (!views.minCodes || !views.superMins)))
      return makeError(name, ": the kernel reads nested qparams as stored; ",
                       "their tensors are not mapped");
    auto level = [&](const safetensors::TensorView &v, ArgRole role,
                     const void *&to, uint64_t &bytes) -> Status {
      const KernelArg *a = k.arg(role);
      if (elements(*a) * byteWidth(a->type) != v.byteSize())
        return makeError(name, ": ", v.name, " holds ", v.byteSize(),
                         " bytes, but ", k.id, " reads ",
                         elements(*a) * byteWidth(a->type), " as ",
                         toString(role));
      to = inPlaceOrCopy(v, byteWidth(a->type), v.name, *ops);
      bytes = v.byteSize();
      return Status::ok();
    };
    QTENSOR_TRY(level(*views.scaleCodes, ArgRole::S, ops->s, ops->sBytes));
    QTENSOR_TRY(level(*views.superScales, ArgRole::S2, ops->s2, ops->s2Bytes));
    if (min) {
      QTENSOR_TRY(level(*views.minCodes, ArgRole::Z, ops->z, ops->zBytes));
      QTENSOR_TRY(level(*views.superMins, ArgRole::Z2, ops->z2, ops->z2Bytes));
    }
    return withBias(k, name, bias, std::move(ops));
  }
  const safetensors::TensorView &scales = *views.scales;
  const safetensors::TensorView *zeros = views.zeros;
  ops->s = inPlaceOrCopy(scales, byteWidth(k.arg(ArgRole::S)->type),
                         name + ".scales", *ops);
  ops->sBytes = scales.byteSize();
  if (k.arg(ArgRole::Z)) {
    if (!zeros)
      return makeError(name, ": the kernel reads zero-points; none stored");
    // u8 zero-points at any address; float mins aligned like the scales.
    ops->z = k.minZero
                 ? inPlaceOrCopy(*zeros, byteWidth(k.arg(ArgRole::Z)->type),
                                 name + ".zeros", *ops)
                 : zeros->data;
    ops->zBytes = zeros->byteSize();
  }
  return withBias(k, name, bias, std::move(ops));
}

namespace {

Expected<std::shared_ptr<WeightOperands>>
withBias(const KernelInstance &k, const std::string &name,
         const std::vector<double> &bias, std::shared_ptr<WeightOperands> ops) {
  if (const KernelArg *b = k.arg(ArgRole::B)) {
    std::vector<double> values =
        bias.empty() ? std::vector<double>(size_t(k.n), 0.0) : bias;
    if (values.size() != size_t(k.n))
      return makeError(name, ": bias of ", values.size(), " values, N = ", k.n);
    QTENSOR_ASSIGN_OR_RETURN(
        HostTensor t,
        HostTensor::fromDoubles(floatOf(b->type), 1, k.n, values));
    ops->bBytes = t.bytes.size();
    ops->copies.emplace_back("bias " + name, ops->bBytes);
    ops->owned.push_back(std::move(t.bytes));
    ops->b = ops->owned.back().data();
  }
  return ops;
}

} // namespace
