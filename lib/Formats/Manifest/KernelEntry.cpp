//===- KernelEntry.cpp - The kernel contract's record ---------------------===//

#include "qtensor/Formats/KernelEntry.h"

#include "qtensor/Support/JsonObjectReader.h"

#include <algorithm>
#include <set>

using namespace qtensor;
using namespace qtensor::artifact;
using json = nlohmann::json;

const char *qtensor::artifact::toString(ArgType t) {
  switch (t) {
  case ArgType::F16:
    return "f16";
  case ArgType::BF16:
    return "bf16";
  case ArgType::F32:
    return "f32";
  case ArgType::I32:
    return "i32";
  case ArgType::I8:
    return "i8";
  case ArgType::U8:
    return "u8";
  }
  return "?";
}

ArgType qtensor::artifact::argTypeOf(FloatType t) {
  return t == FloatType::F16    ? ArgType::F16
         : t == FloatType::BF16 ? ArgType::BF16
                                : ArgType::F32;
}

std::optional<ArgType> qtensor::artifact::parseArgType(const std::string &s) {
  for (ArgType t : {ArgType::F16, ArgType::BF16, ArgType::F32, ArgType::I32,
                    ArgType::I8, ArgType::U8})
    if (s == toString(t))
      return t;
  return std::nullopt;
}

size_t qtensor::artifact::byteWidth(ArgType t) {
  switch (t) {
  case ArgType::F16:
  case ArgType::BF16:
    return 2;
  case ArgType::F32:
  case ArgType::I32:
    return 4;
  case ArgType::I8:
  case ArgType::U8:
    return 1;
  }
  return 1;
}

const char *qtensor::artifact::toString(ArgRole r) {
  switch (r) {
  case ArgRole::X:
    return "x";
  case ArgRole::W:
    return "w";
  case ArgRole::S:
    return "s";
  case ArgRole::S2:
    return "s2";
  case ArgRole::Z:
    return "z";
  case ArgRole::Z2:
    return "z2";
  case ArgRole::B:
    return "b";
  case ArgRole::Y:
    return "y";
  case ArgRole::Map:
    return "map";
  case ArgRole::W2:
    return "w2";
  case ArgRole::W4:
    return "w4";
  case ArgRole::RW4:
    return "rw4";
  case ArgRole::QS:
    return "qs";
  case ArgRole::Z1:
    return "z1";
  case ArgRole::SV:
    return "sv";
  case ArgRole::SC:
    return "sc";
  case ArgRole::SR:
    return "sr";
  case ArgRole::XQ:
    return "xq";
  case ArgRole::SX:
    return "sx";
  case ArgRole::ZX:
    return "zx";
  }
  return "?";
}

static std::optional<ArgRole> parseArgRole(const std::string &s) {
  for (ArgRole r :
       {ArgRole::X,  ArgRole::W,   ArgRole::S,  ArgRole::S2,  ArgRole::Z,
        ArgRole::Z2, ArgRole::B,   ArgRole::Y,  ArgRole::Map, ArgRole::W2,
        ArgRole::W4, ArgRole::RW4, ArgRole::QS, ArgRole::Z1,  ArgRole::SV,
        ArgRole::SC, ArgRole::SR,  ArgRole::XQ, ArgRole::SX,  ArgRole::ZX})
    if (s == toString(r))
      return r;
  return std::nullopt;
}

std::vector<ArgRole> qtensor::artifact::w8a8ArgOrder(bool symmetricActivations,
                                                     bool weightZeroPoints,
                                                     bool bias) {
  std::vector<ArgRole> order = {ArgRole::XQ, ArgRole::SX};
  if (!symmetricActivations)
    order.push_back(ArgRole::ZX);
  order.push_back(ArgRole::W);
  order.push_back(ArgRole::S);
  if (weightZeroPoints)
    order.push_back(ArgRole::Z);
  if (bias)
    order.push_back(ArgRole::B);
  order.push_back(ArgRole::Y);
  return order;
}

std::vector<ArgRole> qtensor::artifact::mixed2416ArgOrder(bool bias) {
  std::vector<ArgRole> order = {ArgRole::X,  ArgRole::Map, ArgRole::W2,
                                ArgRole::W4, ArgRole::RW4, ArgRole::QS,
                                ArgRole::Z1, ArgRole::S2,  ArgRole::Z2,
                                ArgRole::SV, ArgRole::SC,  ArgRole::SR};
  if (bias)
    order.push_back(ArgRole::B);
  order.push_back(ArgRole::Y);
  return order;
}

const char *qtensor::artifact::toString(KernelFormat f) {
  switch (f) {
  case KernelFormat::Ptx:
    return "ptx";
  case KernelFormat::Cubin:
    return "cubin";
  case KernelFormat::HostSharedObject:
    return "host_so";
  case KernelFormat::Reference:
    return "reference";
  }
  return "?";
}

const KernelArg *KernelEntry::arg(ArgRole role) const {
  for (const KernelArg &a : args)
    if (a.role == role)
      return &a;
  return nullptr;
}

const EntryPoint *KernelEntry::entryFor(int64_t t) const {
  if (t < tokens.min || t > *tokens.max)
    return nullptr;
  for (const EntryPoint &e : entries)
    if (t >= e.tokens.min && t <= *e.tokens.max)
      return &e;
  return nullptr;
}

std::array<int64_t, 3> LaunchConfig::gridFor(int64_t t) const {
  std::array<int64_t, 3> g = grid;
  if (tokenAxis >= 0)
    g[size_t(tokenAxis)] = (t + tokensPerBlock - 1) / tokensPerBlock;
  return g;
}

std::optional<KernelFormat>
qtensor::artifact::parseKernelFormat(const std::string &s) {
  for (KernelFormat f :
       {KernelFormat::Ptx, KernelFormat::Cubin, KernelFormat::HostSharedObject,
        KernelFormat::Reference})
    if (s == toString(f))
      return f;
  return std::nullopt;
}

bool KernelEntry::operator==(const KernelEntry &o) const {
  return id == o.id && file == o.file && registryId == o.registryId &&
         target.name == o.target.name && format == o.format &&
         phase == o.phase && tokens == o.tokens && n == o.n && k == o.k &&
         activation == o.activation && output == o.output && bias == o.bias &&
         layout == o.layout && codeBits == o.codeBits &&
         codeSigned == o.codeSigned && minZero == o.minZero &&
         codebook == o.codebook && groupSize == o.groupSize &&
         scale == o.scale && nested == o.nested && mixed == o.mixed &&
         activationQuant == o.activationQuant && entries == o.entries &&
         args == o.args && launch == o.launch && splitK == o.splitK &&
         zeroOutput == o.zeroOutput && rowSplit == o.rowSplit && cpu == o.cpu &&
         ops == o.ops;
}

namespace {

/// A C identifier: what dlsym and a PTX .entry name can be.
bool isSymbol(const std::string &s) {
  if (s.empty() || s.size() > 512 || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (char c : s)
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '$'))
      return false;
  return true;
}

Status readTriple(const json &v, const std::string &where, int64_t max,
                  std::array<int64_t, 3> &out) {
  std::vector<int64_t> dims;
  QTENSOR_TRY(JsonObjectReader::toIntArray(v, where, dims));
  if (dims.empty() || dims.size() > 3)
    return makeError(where, ": expected 1 to 3 dimensions, got ", dims.size());
  out = {1, 1, 1};
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 1 || dims[i] > max)
      return makeError(where, "[", i, "]: ", dims[i], " is outside [1, ", max,
                       "]");
    out[i] = dims[i];
  }
  return Status::ok();
}

Status readLaunch(const json &v, const std::string &where, LaunchConfig &out) {
  JsonObjectReader r(v, where);
  QTENSOR_TRY(r.expectObject());
  const json *grid, *block;
  QTENSOR_TRY(r.require("grid", grid));
  // CUDA's limits: gridDim.x < 2^31, y and z < 2^16; 1024 threads a block.
  QTENSOR_TRY(
      readTriple(*grid, r.at("grid"), (int64_t(1) << 31) - 1, out.grid));
  if (out.grid[1] > 65535 || out.grid[2] > 65535)
    return makeError(r.at("grid"), ": y and z must be at most 65535");
  QTENSOR_TRY(r.require("block", block));
  QTENSOR_TRY(readTriple(*block, r.at("block"), 1024, out.block));
  if (out.block[0] * out.block[1] * out.block[2] > 1024)
    return makeError(r.at("block"), ": ",
                     out.block[0] * out.block[1] * out.block[2],
                     " threads exceed 1024 per block");
  uint64_t shared = 0;
  // 227 KiB is the largest opt-in shared memory of any sm_80/sm_90 part.
  QTENSOR_TRY(r.readUInt("shared_bytes", 0, 227 * 1024, shared));
  out.sharedBytes = shared;
  if (r.find("token_axis")) {
    int64_t axis = 0, per = 0;
    QTENSOR_TRY(r.readInt("token_axis", 0, 2, axis));
    QTENSOR_TRY(r.readInt("tokens_per_block", 1, 65536, per));
    out.tokenAxis = int(axis);
    out.tokensPerBlock = per;
    if (out.grid[size_t(axis)] != 1)
      return makeError(r.at("grid"), "[", axis,
                       "]: the token axis is computed from T; the stored "
                       "extent must be 1, got ",
                       out.grid[size_t(axis)]);
  } else if (r.find("tokens_per_block")) {
    return makeError(r.at("tokens_per_block"), ": given without token_axis");
  }
  return r.noUnknownKeys();
}

Status readArg(const json &v, const std::string &where, KernelArg &out) {
  JsonObjectReader r(v, where);
  QTENSOR_TRY(r.expectObject());
  std::string name, dtype;
  QTENSOR_TRY(r.readString("name", name));
  auto role = parseArgRole(name);
  if (!role)
    return makeError(r.at("name"), ": unknown argument \"", name,
                     "\" (expected x, w, s, s2, z, z2, b or y; a mixed_2416 "
                     "kernel's map, w2, w4, rw4, qs, z1, sv, sc or sr)");
  out.role = *role;
  QTENSOR_TRY(r.readString("dtype", dtype));
  auto type = parseArgType(dtype);
  if (!type)
    return makeError(r.at("dtype"), ": unknown dtype \"", dtype,
                     "\" (expected f16, bf16, f32, i32, i8 or u8)");
  out.type = *type;
  QTENSOR_TRY(r.readIntArray("shape", out.shape));
  if (out.shape.empty() || out.shape.size() > 4)
    return makeError(r.at("shape"), ": rank ", out.shape.size(),
                     " is outside [1, 4]");
  // A mixed tensor's code and outlier streams have the tensor's own
  // lengths, which one kernel for tensors of one shape cannot fix.
  const bool streamLength = out.role == ArgRole::W2 ||
                            out.role == ArgRole::W4 ||
                            out.role == ArgRole::SV || out.role == ArgRole::SC;
  for (size_t i = 0; i < out.shape.size(); ++i) {
    int64_t d = out.shape[i];
    bool tDim = i == 0 && (out.role == ArgRole::X || out.role == ArgRole::Y ||
                           out.role == ArgRole::XQ || out.role == ArgRole::SX ||
                           out.role == ArgRole::ZX);
    if (d == kDynamic && (tDim || streamLength))
      continue;
    if (d < 1 || d > kMaxDimension)
      return makeError(r.at("shape"), "[", i, "]: ", d,
                       tDim ? " must be -1 (dynamic T) or in [1, 2^31]"
                       : streamLength
                           ? " must be -1 (the tensor's stream length) or in "
                             "[1, 2^31]"
                           : " must be in [1, 2^31] (only the T of x and y "
                             "may be dynamic)");
  }
  return r.noUnknownKeys();
}

/// "ops": the manifest tensors that use this entry (validateManifest checks
/// that each is a quantized tensor).
Status readOps(JsonObjectReader &r, KernelEntry &k) {
  const json *ops;
  QTENSOR_TRY(r.readArray("ops", ops));
  if (ops->empty())
    return makeError(r.at("ops"), ": an entry no op uses");
  std::set<std::string> seen;
  for (size_t i = 0; i < ops->size(); ++i) {
    std::string where = JsonObjectReader::indexed(r.at("ops"), i), op;
    QTENSOR_TRY(JsonObjectReader::toString((*ops)[i], where, op));
    if (op.empty())
      return makeError(where, ": empty tensor name");
    if (!seen.insert(op).second)
      return makeError(where, ": \"", op, "\" is listed twice");
    k.ops.push_back(std::move(op));
  }
  return Status::ok();
}

/// [min, max] with max null for unbounded (stored as kMaxDimension).
Status readTokens(const json &v, const std::string &where,
                  kernels::TokenRange &out) {
  if (!v.is_array() || v.size() != 2)
    return makeError(where, ": expected [min, max]");
  int64_t tMin = 0, tMax = kMaxDimension;
  QTENSOR_TRY(
      JsonObjectReader::toInt(v[0], where + "[0]", 1, kMaxDimension, tMin));
  if (!v[1].is_null())
    QTENSOR_TRY(JsonObjectReader::toInt(v[1], where + "[1]", tMin,
                                        kMaxDimension, tMax));
  out = {tMin, tMax};
  return Status::ok();
}

Status readEntryPoint(JsonObjectReader &r, const KernelEntry &k,
                      EntryPoint &e) {
  QTENSOR_TRY(r.expectObject());
  QTENSOR_TRY(r.readString("symbol", e.symbol));
  if (!isSymbol(e.symbol))
    return makeError(r.at("symbol"), ": \"", e.symbol,
                     "\" is not a symbol name");
  if (k.isHost() && e.symbol.rfind("_mlir_ciface_", 0) != 0)
    return makeError(r.at("symbol"),
                     ": host kernels are called through "
                     "MLIR's C interface; \"",
                     e.symbol, "\" does not start with _mlir_ciface_");
  const json *tokens;
  QTENSOR_TRY(r.require("tokens", tokens));
  QTENSOR_TRY(readTokens(*tokens, r.at("tokens"), e.tokens));
  return r.noUnknownKeys();
}

Status readFloat(JsonObjectReader &r, const char *key, FloatType &out) {
  return r.readEnum(key, &qtensor::parseFloatType, out);
}

/// The arguments in call order: names, dtypes and shapes, and their
/// agreement with the capability's own fields.
Status readMixedArgs(JsonObjectReader &r, const json &args, KernelEntry &k);
Status readW8A8Args(JsonObjectReader &r, const json &args, KernelEntry &k);

Status readArgs(JsonObjectReader &r, KernelEntry &k) {
  const json *args;
  QTENSOR_TRY(r.readArray("args", args));
  if (k.mixed)
    return readMixedArgs(r, *args, k);
  if (k.activationQuant)
    return readW8A8Args(r, *args, k);
  if (args->size() < 2 || args->size() > 8)
    return makeError(r.at("args"), ": expected 2 to 8 arguments, got ",
                     args->size());
  std::set<ArgRole> roles;
  for (size_t i = 0; i < args->size(); ++i) {
    KernelArg a;
    QTENSOR_TRY(
        readArg((*args)[i], JsonObjectReader::indexed(r.at("args"), i), a));
    if (a.role > ArgRole::Y)
      return makeError(
          r.at("args"), ": argument \"", toString(a.role),
          "\" is not expected (",
          a.role >= ArgRole::XQ
              ? "quantized activations; the record has no activation_quant"
              : "a mixed_2416 stream; the layout is not mixed_2416",
          ")");
    if (!roles.insert(a.role).second)
      return makeError(JsonObjectReader::indexed(r.at("args"), i),
                       ": argument \"", toString(a.role), "\" appears twice");
    if (!k.args.empty() && a.role < k.args.back().role)
      return makeError(JsonObjectReader::indexed(r.at("args"), i),
                       ": argument \"", toString(a.role),
                       "\" out of order (x, w, s, s2, z, z2, b, y)");
    k.args.push_back(std::move(a));
  }
  std::vector<ArgRole> need = {ArgRole::X, ArgRole::Y};
  if (!k.isReference()) {
    need.push_back(ArgRole::W);
    need.push_back(ArgRole::S);
    if (k.nested)
      need.push_back(ArgRole::S2);
    if (k.takesZeroPoints())
      need.push_back(ArgRole::Z);
    if (k.nested && k.minZero)
      need.push_back(ArgRole::Z2);
  }
  if (k.bias)
    need.push_back(ArgRole::B);
  for (ArgRole role : need)
    if (!roles.count(role))
      return makeError(r.at("args"), ": argument \"", toString(role),
                       "\" is missing");
  if (roles.size() != need.size())
    for (ArgRole role : roles)
      if (std::find(need.begin(), need.end(), role) == need.end())
        return makeError(r.at("args"), ": argument \"", toString(role),
                         "\" is not expected (",
                         role == ArgRole::Z
                             ? (k.codebook != Codebook::None
                                    ? "the codes index a codebook"
                                    : "the codes are signed")
                         : role == ArgRole::B ? "\"bias\" is false"
                         : role == ArgRole::S2 || role == ArgRole::Z2
                             ? (k.nested ? "the scales have no min"
                                         : "the scales are not nested")
                             : "a reference entry reads no packed weight",
                         ")");
  const KernelArg &x = *k.arg(ArgRole::X), &y = *k.arg(ArgRole::Y);
  if (x.shape != std::vector<int64_t>{kDynamic, k.k})
    return makeError(r.at("args"), ": x has shape ", shapeToString(x.shape),
                     ", expected [-1, ", k.k, "] (dynamic T, K = ", k.k, ")");
  if (y.shape != std::vector<int64_t>{kDynamic, k.n})
    return makeError(r.at("args"), ": y has shape ", shapeToString(y.shape),
                     ", expected [-1, ", k.n, "] (dynamic T, N = ", k.n, ")");
  auto dtypeIs = [&](const KernelArg &a, FloatType want, const char *field) {
    if (a.type == argTypeOf(want))
      return Status::ok();
    return Status(makeError(r.at("args"), ": ", toString(a.role), " is ",
                            toString(a.type), ", but \"", field, "\" is ",
                            qtensor::toString(want)));
  };
  QTENSOR_TRY(dtypeIs(x, k.activation, "activation"));
  QTENSOR_TRY(dtypeIs(y, k.output, "output"));
  if (const KernelArg *b = k.arg(ArgRole::B)) {
    QTENSOR_TRY(dtypeIs(*b, k.output, "output"));
    if (b->shape != std::vector<int64_t>{k.n})
      return makeError(r.at("args"), ": b has shape ", shapeToString(b->shape),
                       ", expected [", k.n, "]");
  }
  if (k.isReference())
    return Status::ok();
  if (k.arg(ArgRole::W)->type != ArgType::I32)
    return makeError(r.at("args"), ": w is ", toString(k.arg(ArgRole::W)->type),
                     ", expected i32 (packed code words)");
  if (k.nested) {
    // One-byte codes under second-level values (KernelEntry::nested).
    const KernelArg &s = *k.arg(ArgRole::S);
    if (s.type != ArgType::I8 && s.type != ArgType::U8)
      return makeError(r.at("args"), ": s is ", toString(s.type),
                       ", expected i8 or u8 nested scale codes");
    QTENSOR_TRY(
        dtypeIs(*k.arg(ArgRole::S2), k.nested->superType, "nested.super_type"));
    if (const KernelArg *z = k.arg(ArgRole::Z); z && z->type != ArgType::U8)
      return makeError(r.at("args"), ": z is ", toString(z->type),
                       ", expected u8 nested min codes");
    if (const KernelArg *z2 = k.arg(ArgRole::Z2))
      QTENSOR_TRY(dtypeIs(*z2, k.nested->superType, "nested.super_type"));
    return Status::ok();
  }
  QTENSOR_TRY(dtypeIs(*k.arg(ArgRole::S), k.scale, "scale"));
  if (const KernelArg *z = k.arg(ArgRole::Z)) {
    if (k.minZero)
      QTENSOR_TRY(dtypeIs(*z, k.scale, "scale"));
    else if (z->type != ArgType::U8)
      return makeError(r.at("args"), ": z is ", toString(z->type),
                       ", expected u8 zero-points");
  }
  return Status::ok();
}

/// `r`'s "launch": required of a GPU kernel, refused on a host one.
Status readLaunchOf(JsonObjectReader &r, const KernelEntry &k,
                    std::optional<LaunchConfig> &out) {
  if (const json *launch = r.find("launch")) {
    if (k.isHost())
      return makeError(r.at("launch"), ": a host kernel has no launch "
                                       "configuration");
    LaunchConfig l;
    QTENSOR_TRY(readLaunch(*launch, r.at("launch"), l));
    out = l;
  } else if (k.isGpu()) {
    return makeError(r.at("launch"), ": required field is missing (a GPU "
                                     "kernel has a launch configuration)");
  }
  return Status::ok();
}

/// `activation_quant`: a W8A8 record's quantizer (KernelEntry::
/// ActivationQuantizer), after the GEMV's entries: 8-bit codes in the
/// decode_gemv layout, no nested levels or codebook, decode T up to 16,
/// and one quantizer entry point for each GEMV entry's single T.
Status readActivationQuantizer(const json &v, JsonObjectReader &parent,
                               KernelEntry &k) {
  const std::string where = parent.at("activation_quant");
  JsonObjectReader r(v, where);
  QTENSOR_TRY(r.expectObject());
  if (k.layout != "decode_gemv" || k.codeBits != 8 || k.nested ||
      k.codebook != Codebook::None || k.minZero)
    return makeError(where,
                     ": per-token activations run the W8A8 GEMV, which reads "
                     "8-bit codes in the decode_gemv layout with integer or "
                     "no zero-points (no nested levels, codebook or min)");
  if (k.phase != kernels::Phase::Decode || *k.tokens.max > 16)
    return makeError(where,
                     ": the W8A8 GEMV's entries take T in [1, 16] (decode); a "
                     "larger T runs in chunks of them");
  for (size_t i = 0; i < k.entries.size(); ++i)
    if (k.entries[i].tokens.min != *k.entries[i].tokens.max)
      return makeError(parent.at("entries"), "[", i,
                       "].tokens: a W8A8 GEMV entry point takes one T (the "
                       "kernel's T is static)");
  KernelEntry::ActivationQuantizer q;
  QTENSOR_TRY(r.readBool("symmetric", q.symmetric));
  const json *entries;
  QTENSOR_TRY(r.readArray("entries", entries));
  if (entries->size() != k.entries.size())
    return makeError(r.at("entries"), ": ", entries->size(),
                     " quantizer entry points for ", k.entries.size(),
                     " GEMV entry points");
  for (size_t i = 0; i < entries->size(); ++i) {
    const std::string at = JsonObjectReader::indexed(r.at("entries"), i);
    JsonObjectReader er((*entries)[i], at);
    EntryPoint ep;
    QTENSOR_TRY(readEntryPoint(er, k, ep));
    if (!(ep.tokens == k.entries[i].tokens))
      return makeError(at, ".tokens: each quantizer entry takes the one T of "
                           "the GEMV entry beside it");
    q.entries.push_back(std::move(ep));
  }
  QTENSOR_TRY(readLaunchOf(r, k, q.launch));
  QTENSOR_TRY(r.noUnknownKeys());
  k.activationQuant = std::move(q);
  return Status::ok();
}

/// A W8A8 GEMV's arguments: exactly w8a8ArgOrder, the quantized
/// activations [T, K] (i8, or u8 with a zero-point per token), their scale
/// (and zero-point) per token, then the affine weight operands.
Status readW8A8Args(JsonObjectReader &r, const json &args, KernelEntry &k) {
  const bool symmetric = k.activationQuant->symmetric;
  const std::vector<ArgRole> order =
      w8a8ArgOrder(symmetric, k.takesZeroPoints(), k.bias);
  std::string spelled;
  for (ArgRole role : order)
    spelled += std::string(spelled.empty() ? "" : ", ") + toString(role);
  if (args.size() != order.size())
    return makeError(r.at("args"), ": a W8A8 GEMV takes ", order.size(),
                     " arguments (", spelled, "), got ", args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string where = JsonObjectReader::indexed(r.at("args"), i);
    KernelArg a;
    QTENSOR_TRY(readArg(args[i], where, a));
    if (a.role != order[i])
      return makeError(where, ": argument \"", toString(a.role),
                       "\", expected \"", toString(order[i]), "\" (", spelled,
                       ")");
    std::optional<KernelArg> want;
    switch (a.role) {
    case ArgRole::XQ:
      want = KernelArg{
          a.role, symmetric ? ArgType::I8 : ArgType::U8, {kDynamic, k.k}};
      break;
    case ArgRole::SX:
      want = KernelArg{a.role, ArgType::F32, {kDynamic}};
      break;
    case ArgRole::ZX:
      want = KernelArg{a.role, ArgType::I32, {kDynamic}};
      break;
    case ArgRole::Y:
      want = KernelArg{a.role, argTypeOf(k.output), {kDynamic, k.n}};
      break;
    case ArgRole::B:
      want = KernelArg{a.role, argTypeOf(k.output), {k.n}};
      break;
    case ArgRole::W:
      if (a.type != ArgType::I32)
        return makeError(where, ": w is ", toString(a.type),
                         ", expected i32 (packed code words)");
      break;
    case ArgRole::S:
      if (a.type != argTypeOf(k.scale))
        return makeError(where, ": s is ", toString(a.type),
                         ", but \"scale\" is ", qtensor::toString(k.scale));
      break;
    default: // z
      if (a.type != ArgType::U8)
        return makeError(where, ": z is ", toString(a.type),
                         ", expected u8 zero-points");
      break;
    }
    if (want && a.type != want->type)
      return makeError(where, ": ", toString(a.role), " is ", toString(a.type),
                       ", expected ", toString(want->type));
    if (want && a.shape != want->shape)
      return makeError(where, ": ", toString(a.role), " has shape ",
                       shapeToString(a.shape), ", expected ",
                       shapeToString(want->shape));
    k.args.push_back(std::move(a));
  }
  return Status::ok();
}

/// The affine contract: code, group size, scale dtype and nested levels.
Status readAffineContract(JsonObjectReader &r, KernelEntry &k) {
  const json *code;
  QTENSOR_TRY(r.readObject("code", code));
  JsonObjectReader cr(*code, r.at("code"));
  int64_t bits = 0;
  QTENSOR_TRY(cr.readInt("bits", 2, 8, bits));
  if (bits == 7)
    return makeError(cr.at("bits"), ": ", bits,
                     ", expected 2, 3, 4, 5, 6 or 8");
  k.codeBits = unsigned(bits);
  QTENSOR_TRY(cr.readBool("signed", k.codeSigned));
  if (const json *zp = cr.find("zero_point")) {
    if (!zp->is_string() || (zp->get<std::string>() != "min" &&
                             zp->get<std::string>() != "integer"))
      return makeError(cr.at("zero_point"),
                       ": expected \"min\" or \"integer\"");
    k.minZero = zp->get<std::string>() == "min";
    if (k.minZero && k.codeSigned)
      return makeError(cr.at("zero_point"),
                       ": a min zero-point needs unsigned codes");
  }
  if (cr.find("codebook")) {
    QTENSOR_TRY(cr.readEnum("codebook", parseCodebook, k.codebook));
    if (k.codebook == Codebook::None)
      return makeError(cr.at("codebook"),
                       ": \"none\" is spelled by leaving codebook out");
    if (k.codeSigned || k.minZero)
      return makeError(cr.at("codebook"), ": codebook ", toString(k.codebook),
                       " codes are unsigned indices with no zero-point");
    if ((size_t(1) << k.codeBits) != codebookValues(k.codebook).size())
      return makeError(cr.at("codebook"), ": ", toString(k.codebook), " has ",
                       codebookValues(k.codebook).size(),
                       " entries, not one per ", k.codeBits, "-bit code");
  }
  QTENSOR_TRY(cr.noUnknownKeys());
  const json *group;
  QTENSOR_TRY(r.require("group_size", group));
  if (group->is_string()) {
    if (group->get<std::string>() != "per_channel")
      return makeError(r.at("group_size"), ": \"", group->get<std::string>(),
                       "\", expected an integer or \"per_channel\"");
    k.groupSize = 0;
  } else {
    QTENSOR_TRY(JsonObjectReader::toInt(*group, r.at("group_size"), 1,
                                        kMaxDimension, k.groupSize));
  }
  QTENSOR_TRY(readFloat(r, "scale", k.scale));
  if (k.scale == FloatType::F32 && k.target.backend != kernels::Backend::Host &&
      k.layout != "decode_gemv" && k.layout != "prefill_mma")
    return makeError(r.at("scale"), ": GPU kernels other than the decode GEMV "
                                    "and the tensor-core GEMM read f16 or "
                                    "bf16 scales");
  if (const json *nested = r.find("nested")) {
    JsonObjectReader nr(*nested, r.at("nested"));
    QTENSOR_TRY(nr.expectObject());
    KernelEntry::NestedScales n;
    QTENSOR_TRY(
        nr.readInt("super_group_size", 1, kMaxDimension, n.superGroupSize));
    QTENSOR_TRY(readFloat(nr, "super_type", n.superType));
    QTENSOR_TRY(nr.noUnknownKeys());
    if (!k.isHost() && k.layout != "decode_gemv" && k.layout != "prefill_mma")
      return makeError(r.at("nested"),
                       ": only the host GEMM, the decode GEMV and the "
                       "tensor-core GEMM read nested scales as stored, not a "
                       "GPU kernel of layout \"",
                       k.layout, "\"");
    if (k.scale != FloatType::F32)
      return makeError(r.at("scale"), ": nested scales decode to f32, not ",
                       toString(k.scale));
    if (n.superType == FloatType::F32)
      return makeError(nr.at("super_type"), ": f16 or bf16 expected (the "
                                            "products with a code are exact "
                                            "in f32)");
    if (k.groupSize == 0 || n.superGroupSize % k.groupSize != 0 ||
        k.k % n.superGroupSize != 0)
      return makeError(nr.at("super_group_size"), ": ", n.superGroupSize,
                       " is not a multiple of group_size ", k.groupSize,
                       " dividing K = ", k.k);
    if (k.takesZeroPoints() && !k.minZero)
      return makeError(r.at("nested"), ": nested scales take a min or no "
                                       "zero-point, not integer zero-points");
    k.nested = n;
  }

  return Status::ok();
}
/// layout mixed_2416: the descriptor fields the kernel was specialized for
/// (KernelEntry::MixedStreams), checked against K, N and the phase.
Status readMixedContract(JsonObjectReader &r, KernelEntry &k) {
  for (const char *affine : {"code", "group_size", "scale", "nested"})
    if (r.find(affine))
      return makeError(r.at(affine),
                       ": a mixed_2416 kernel reads its tensor's streams; "
                       "this is an affine kernel's field");
  const json *mixed;
  QTENSOR_TRY(r.readObject("mixed", mixed));
  JsonObjectReader mr(*mixed, r.at("mixed"));
  KernelEntry::MixedStreams m;
  QTENSOR_TRY(
      mr.readInt("first_group_size", 64, kMaxDimension, m.firstGroupSize));
  if (m.firstGroupSize % 64 != 0 || k.k % m.firstGroupSize != 0)
    return makeError(mr.at("first_group_size"), ": ", m.firstGroupSize,
                     " is not a multiple of 64 dividing K = ", k.k);
  QTENSOR_TRY(
      mr.readInt("second_group_size", 1, kMaxDimension, m.secondGroupSize));
  if (k.n % m.secondGroupSize != 0)
    return makeError(mr.at("second_group_size"), ": ", m.secondGroupSize,
                     " does not divide N = ", k.n);
  QTENSOR_TRY(readFloat(mr, "second_type", m.secondType));
  QTENSOR_TRY(readFloat(mr, "sparse_type", m.sparseType));
  for (auto [key, type] : {std::pair{"second_type", m.secondType},
                           std::pair{"sparse_type", m.sparseType}})
    if (type == FloatType::F32)
      return makeError(mr.at(key), ": f16 or bf16 expected");
  QTENSOR_TRY(mr.readEnum("sparse", &parseSparseSemantics, m.sparse));
  QTENSOR_TRY(mr.noUnknownKeys());
  if (k.phase != kernels::Phase::Decode || *k.tokens.max > 16)
    return makeError(r.at("tokens"),
                     ": a mixed_2416 kernel's entries take T in [1, 16] "
                     "(decode); a larger T runs in chunks of them");
  k.mixed = m;
  return Status::ok();
}

/// A mixed_2416 kernel's arguments: exactly mixed2416ArgOrder, each with
/// the dtype and shape its stream has (Conversion/Mixed2416Kernel.h);
/// the code and outlier streams' lengths are the tensor's (-1).
Status readMixedArgs(JsonObjectReader &r, const json &args, KernelEntry &k) {
  const std::vector<ArgRole> order = mixed2416ArgOrder(k.bias);
  std::string spelled;
  for (ArgRole role : order)
    spelled += std::string(spelled.empty() ? "" : ", ") + toString(role);
  if (args.size() != order.size())
    return makeError(r.at("args"), ": a mixed_2416 kernel takes ", order.size(),
                     " arguments (", spelled, "), got ", args.size());
  const KernelEntry::MixedStreams &m = *k.mixed;
  const int64_t n = k.n, groups = k.k / m.firstGroupSize;
  auto want = [&](ArgRole role) -> KernelArg {
    switch (role) {
    case ArgRole::X:
      return {role, argTypeOf(k.activation), {kDynamic, k.k}};
    case ArgRole::Map:
      return {role, ArgType::U8, {(n * groups + 7) / 8}};
    case ArgRole::W2:
    case ArgRole::W4:
    case ArgRole::SC:
      return {role, ArgType::I32, {kDynamic}};
    case ArgRole::RW4:
    case ArgRole::SR:
      return {role, ArgType::I32, {n + 1}};
    case ArgRole::QS:
    case ArgRole::Z1:
      return {role, ArgType::U8, {n, groups}};
    case ArgRole::S2:
    case ArgRole::Z2:
      return {role, argTypeOf(m.secondType), {n / m.secondGroupSize, groups}};
    case ArgRole::SV:
      return {role, argTypeOf(m.sparseType), {kDynamic}};
    case ArgRole::B:
      return {role, argTypeOf(k.output), {n}};
    default:
      return {role, argTypeOf(k.output), {kDynamic, n}};
    }
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string where = JsonObjectReader::indexed(r.at("args"), i);
    KernelArg a;
    QTENSOR_TRY(readArg(args[i], where, a));
    if (a.role != order[i])
      return makeError(where, ": argument \"", toString(a.role),
                       "\", expected \"", toString(order[i]), "\" (", spelled,
                       ")");
    KernelArg expected = want(a.role);
    if (a.type != expected.type)
      return makeError(where, ": ", toString(a.role), " is ", toString(a.type),
                       ", expected ", toString(expected.type));
    if (a.shape != expected.shape)
      return makeError(where, ": ", toString(a.role), " has shape ",
                       shapeToString(a.shape), ", expected ",
                       shapeToString(expected.shape));
    k.args.push_back(std::move(a));
  }
  return Status::ok();
}

} // namespace

Expected<KernelEntry>
qtensor::artifact::kernelEntryFromJson(const json &j,
                                       const std::string &where) {
  KernelEntry k;
  JsonObjectReader r(j, where);
  QTENSOR_TRY(r.expectObject());
  QTENSOR_TRY(r.readString("id", k.id));
  QTENSOR_TRY(r.readOptionalString("file", k.file));
  QTENSOR_TRY(r.readString("registry_id", k.registryId));
  std::string target, format;
  QTENSOR_TRY(r.readString("target", target));
  auto parsedTarget = kernels::parseTarget(target);
  if (!parsedTarget)
    return makeError(r.at("target"), ": unknown target \"", target, "\"");
  k.target = *parsedTarget;
  QTENSOR_TRY(r.readString("format", format));
  std::optional<KernelFormat> parsedFormat = parseKernelFormat(format);
  if (!parsedFormat)
    return makeError(r.at("format"), ": unknown format \"", format,
                     "\" (expected ptx, cubin, host_so or reference)");
  k.format = *parsedFormat;
  bool hostTarget = k.target.backend == kernels::Backend::Host;
  if (!k.isReference() && hostTarget != k.isHost())
    return makeError(r.at("format"), ": format ", format,
                     " does not run on target ", target);

  // The file: code for native formats, none for the reference fallback.
  if (k.isReference() && k.file)
    return makeError(r.at("file"), ": a reference (full-dequant) entry has "
                                   "no code file");
  if (!k.isReference() && !k.file)
    return makeError(r.at("file"),
                     ": required field is missing (a compiled kernel has "
                     "a code file)");

  QTENSOR_TRY(r.readEnum("phase", &kernels::parsePhase, k.phase));
  const json *tokens;
  QTENSOR_TRY(r.require("tokens", tokens));
  QTENSOR_TRY(readTokens(*tokens, r.at("tokens"), k.tokens));
  // Each entry serves its own phase's T (the trace plans per phase).
  kernels::TokenRange phaseRange = kernels::phaseTokens(k.phase);
  kernels::TokenRange claimed = k.tokens;
  if (*claimed.max == kMaxDimension)
    claimed.max.reset();
  if (!phaseRange.contains(claimed))
    return makeError(r.at("tokens"), ": ", kernels::toString(claimed),
                     " lies outside the ", kernels::toString(k.phase),
                     " phase's T range ", kernels::toString(phaseRange));
  QTENSOR_TRY(r.readInt("n", 1, kMaxDimension, k.n));
  QTENSOR_TRY(r.readInt("k", 1, kMaxDimension, k.k));
  QTENSOR_TRY(readFloat(r, "activation", k.activation));
  if (k.activation == FloatType::F32 && !k.isReference())
    return makeError(r.at("activation"), ": native kernels take f16 or bf16 "
                                         "activations");
  QTENSOR_TRY(readFloat(r, "output", k.output));
  QTENSOR_TRY(r.readBool("bias", k.bias));

  if (k.isReference()) {
    const json *layout = r.find("layout");
    if (layout && !layout->is_null())
      return makeError(r.at("layout"), ": a reference entry reads any "
                                       "layout (null expected)");
    QTENSOR_TRY(readArgs(r, k));
    QTENSOR_TRY(readOps(r, k));
    QTENSOR_TRY(r.noUnknownKeys());
    return k;
  }

  QTENSOR_TRY(r.readString("layout", k.layout));
  if (k.layout == kMixed2416Layout)
    QTENSOR_TRY(readMixedContract(r, k));
  else
    QTENSOR_TRY(readAffineContract(r, k));

  const json *entries;
  QTENSOR_TRY(r.readArray("entries", entries));
  if (entries->empty() || entries->size() > 64)
    return makeError(r.at("entries"), ": expected 1 to 64 entry points, got ",
                     entries->size());
  for (size_t i = 0; i < entries->size(); ++i) {
    JsonObjectReader er((*entries)[i],
                        JsonObjectReader::indexed(r.at("entries"), i));
    EntryPoint ep;
    QTENSOR_TRY(readEntryPoint(er, k, ep));
    k.entries.push_back(std::move(ep));
  }
  // Ascending, disjoint, without gaps, covering `tokens`: every T the entry
  // serves maps to exactly one entry point. (An entry point may accept more
  // than this phase's T: the GEMM's one entry serves both phases.)
  if (k.entries.front().tokens.min > k.tokens.min)
    return makeError(r.at("entries"),
                     "[0].tokens: starts at T = ", k.entries.front().tokens.min,
                     ", so T = ", k.tokens.min,
                     " of \"tokens\" has no entry point");
  for (size_t i = 1; i < k.entries.size(); ++i)
    if (k.entries[i].tokens.min != *k.entries[i - 1].tokens.max + 1)
      return makeError(r.at("entries"), "[", i,
                       "].tokens: starts at T = ", k.entries[i].tokens.min,
                       ", expected ", *k.entries[i - 1].tokens.max + 1,
                       " (entries ascend without gaps or overlaps)");
  if (*k.entries.back().tokens.max < *k.tokens.max)
    return makeError(r.at("entries"), "[", k.entries.size() - 1,
                     "].tokens: ends at T = ", *k.entries.back().tokens.max,
                     ", so T = ", *k.entries.back().tokens.max + 1,
                     " of \"tokens\" has no entry point");

  if (k.mixed)
    for (size_t i = 0; i < k.entries.size(); ++i)
      if (k.entries[i].tokens.min != *k.entries[i].tokens.max)
        return makeError(r.at("entries"), "[", i,
                         "].tokens: a mixed_2416 entry point takes one T (the "
                         "kernel's T is static)");
  if (const json *quant = r.find("activation_quant"))
    QTENSOR_TRY(readActivationQuantizer(*quant, r, k));
  QTENSOR_TRY(readArgs(r, k));
  QTENSOR_TRY(readLaunchOf(r, k, k.launch));
  QTENSOR_TRY(r.readInt("split_k", 1, 1024, k.splitK));
  QTENSOR_TRY(r.readBool("zero_output", k.zeroOutput));
  if (k.isHost()) {
    QTENSOR_TRY(r.readEnum("cpu", parseHostCpuLevel, k.cpu));
    if (r.find("row_split"))
      QTENSOR_TRY(r.readBool("row_split", k.rowSplit));
  } else if (r.find("cpu") || r.find("row_split")) {
    return makeError(r.at(r.find("cpu") ? "cpu" : "row_split"),
                     ": only a host kernel has a CPU level or splits rows");
  }
  if (k.rowSplit && k.mixed)
    return makeError(r.at("row_split"),
                     ": a mixed_2416 kernel indexes its streams by absolute "
                     "row and cannot be split by rows");
  if (k.rowSplit && k.zeroOutput)
    return makeError(r.at("row_split"), ": a kernel that needs y zeroed "
                                        "cannot be split by rows");
  if (k.splitK > 1 && !k.zeroOutput)
    return makeError(r.at("zero_output"), ": split_k = ", k.splitK,
                     " accumulates partial sums into y, which must then be "
                     "zeroed before the call");
  QTENSOR_TRY(readOps(r, k));
  QTENSOR_TRY(r.noUnknownKeys());
  return k;
}

namespace {

/// [min, max], max null when unbounded.
json tokensJson(const kernels::TokenRange &t) {
  const bool unbounded = !t.max || *t.max == kMaxDimension;
  return json::array({t.min, unbounded ? json(nullptr) : json(*t.max)});
}

json launchJson(const LaunchConfig &l) {
  json launch = {
      {"grid", l.grid}, {"block", l.block}, {"shared_bytes", l.sharedBytes}};
  if (l.tokenAxis >= 0) {
    launch["token_axis"] = l.tokenAxis;
    launch["tokens_per_block"] = l.tokensPerBlock;
  }
  return launch;
}

json argJson(const KernelArg &a) {
  return {{"name", toString(a.role)},
          {"dtype", toString(a.type)},
          {"shape", a.shape}};
}

} // namespace

json qtensor::artifact::toJson(const KernelEntry &e) {
  json j = {{"id", e.id},
            {"registry_id", e.registryId},
            {"target", e.target.name},
            {"format", toString(e.format)},
            {"phase", kernels::toString(e.phase)},
            {"tokens", tokensJson(e.tokens)},
            {"n", e.n},
            {"k", e.k},
            {"activation", toString(e.activation)},
            {"output", toString(e.output)},
            {"bias", e.bias},
            {"ops", e.ops}};
  if (e.file)
    j["file"] = *e.file;
  json args = json::array();
  for (const KernelArg &a : e.args)
    args.push_back(argJson(a));
  j["args"] = std::move(args);
  if (e.isReference()) {
    j["layout"] = nullptr;
    return j;
  }
  j["layout"] = e.layout;
  if (e.mixed) {
    j["mixed"] = {{"first_group_size", e.mixed->firstGroupSize},
                  {"second_group_size", e.mixed->secondGroupSize},
                  {"second_type", toString(e.mixed->secondType)},
                  {"sparse_type", toString(e.mixed->sparseType)},
                  {"sparse", toString(e.mixed->sparse)}};
  } else {
    j["code"] = {{"bits", e.codeBits}, {"signed", e.codeSigned}};
    if (e.minZero)
      j["code"]["zero_point"] = "min";
    if (e.codebook != Codebook::None)
      j["code"]["codebook"] = toString(e.codebook);
    j["group_size"] =
        e.groupSize == 0 ? json("per_channel") : json(e.groupSize);
    j["scale"] = toString(e.scale);
    if (e.nested)
      j["nested"] = {{"super_group_size", e.nested->superGroupSize},
                     {"super_type", toString(e.nested->superType)}};
  }
  auto entriesJson = [](const std::vector<EntryPoint> &points) {
    json entries = json::array();
    for (const EntryPoint &p : points)
      entries.push_back(
          {{"symbol", p.symbol}, {"tokens", tokensJson(p.tokens)}});
    return entries;
  };
  j["entries"] = entriesJson(e.entries);
  if (e.activationQuant) {
    json q = {{"symmetric", e.activationQuant->symmetric},
              {"entries", entriesJson(e.activationQuant->entries)}};
    if (e.activationQuant->launch)
      q["launch"] = launchJson(*e.activationQuant->launch);
    j["activation_quant"] = std::move(q);
  }
  if (e.launch)
    j["launch"] = launchJson(*e.launch);
  j["split_k"] = e.splitK;
  j["zero_output"] = e.zeroOutput;
  if (e.isHost()) {
    j["cpu"] = toString(e.cpu);
    if (e.rowSplit)
      j["row_split"] = true;
  }
  return j;
}
