//===- HostOperands.cpp - A native kernel's weight operands on the host ---===//

#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Runtime/OpKernel.h"

#include <algorithm>

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

Expected<std::shared_ptr<WeightOperands>>
qtensor::runtime::makeMixed2416HostOperands(
    const KernelInstance &k, const artifact::TensorEntry &entry,
    const std::map<std::string, const safetensors::TensorView *, std::less<>>
        &views,
    const std::vector<int32_t> &rw4, const std::vector<double> &bias) {
  const artifact::Mixed2416Tensor *mixed = entry.mixed2416();
  if (!mixed || !k.mixed)
    return makeError(k.where(), ": no mixed_2416 operands for \"", entry.name,
                     "\"");
  // What the kernel never reads (an empty stream) still needs an address.
  alignas(16) static const uint8_t kEmpty[16] = {};
  auto ops = std::make_shared<WeightOperands>();
  const std::string &name = entry.name;
  const std::pair<ArgRole, const char *> stored[] = {
      {ArgRole::Map, "precision_map"},
      {ArgRole::W2, "w2_codes"},
      {ArgRole::W4, "w4_codes"},
      {ArgRole::QS, "first_scale_codes"},
      {ArgRole::Z1, "first_zero_points"},
      {ArgRole::S2, "second_scales"},
      {ArgRole::Z2, "second_zero_points"},
      {ArgRole::SV, "sparse_values"},
      {ArgRole::SC, "sparse_columns"},
      {ArgRole::SR, "sparse_row_pointers"}};
  for (const auto &[role, key] : stored) {
    const KernelArg *a = k.arg(role);
    auto view = views.find(key);
    if (!a || view == views.end() || !view->second)
      return makeError(name, ": its ", key, " stream is not mapped for ", k.id);
    const safetensors::TensorView &v = *view->second;
    const size_t width = byteWidth(a->type);
    if (v.byteSize() % width != 0)
      return makeError(name, ": ", v.name, " holds ", v.byteSize(),
                       " bytes, not whole ", toString(a->type), " elements");
    const int64_t count = int64_t(v.byteSize() / width);
    bool dynamic =
        std::find(a->shape.begin(), a->shape.end(), kDynamic) != a->shape.end();
    if (!dynamic && uint64_t(count) != elements(*a))
      return makeError(name, ": ", v.name, " holds ", count, " ",
                       toString(a->type), " elements, but ", k.id, " reads ",
                       elements(*a), " as ", toString(role));
    // The code streams meet 16-byte vector loads; the rest element loads.
    const size_t alignment =
        role == ArgRole::W2 || role == ArgRole::W4 ? 16 : width;
    WeightOperands::Stream s;
    s.data = count == 0 ? kEmpty : inPlaceOrCopy(v, alignment, v.name, *ops);
    s.bytes = v.byteSize();
    s.elements = count;
    ops->streams[role] = s;
  }
  ops->wBytes =
      ops->streams[ArgRole::W2].bytes + ops->streams[ArgRole::W4].bytes;
  if (int64_t(rw4.size()) != k.n + 1)
    return makeError(name, ": ", rw4.size(),
                     " row counts of W4 groups, N + 1 = ", k.n + 1);
  const uint8_t *rw4Bytes = reinterpret_cast<const uint8_t *>(rw4.data());
  ops->owned.emplace_back(rw4Bytes, rw4Bytes + rw4.size() * sizeof(int32_t));
  ops->streams[ArgRole::RW4] = {ops->owned.back().data(),
                                uint64_t(ops->owned.back().size()),
                                int64_t(rw4.size())};
  ops->copies.emplace_back("W4 groups before each row of " + name,
                           ops->owned.back().size());
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
