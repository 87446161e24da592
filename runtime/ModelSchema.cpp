//===- ModelSchema.cpp - The tensors an architecture requires -------------===//

#include "qtensor/Runtime/ModelSchema.h"

#include "qtensor/Formats/SafetensorsDType.h"
#include "qtensor/Models/TensorNames.h"
#include "qtensor/Runtime/Plan.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <optional>
#include <string_view>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

using models::BlockLinear;
using models::Naming;
constexpr size_t kRoles = models::kBlockLinearCount;
constexpr size_t Q = size_t(BlockLinear::Q), K = size_t(BlockLinear::K),
                 V = size_t(BlockLinear::V), O = size_t(BlockLinear::O),
                 Gate = size_t(BlockLinear::Gate), Up = size_t(BlockLinear::Up),
                 Down = size_t(BlockLinear::Down);

std::string linearName(Naming n, int64_t layer, size_t role) {
  return models::linearWeightName(n, layer, models::kBlockLinears[role]);
}

/// The naming of the artifact's names; both at once is an error.
Expected<Naming> chooseNaming(const artifact::Manifest &m,
                              const std::string &arch) {
  std::optional<std::string> hf, gguf;
  auto see = [&](const std::string &raw) {
    std::string name = splitRankName(raw).first;
    if (!hf && models::usesNaming(Naming::HuggingFace, name))
      hf = name;
    if (!gguf && models::usesNaming(Naming::GGUF, name))
      gguf = name;
  };
  for (const artifact::OpBinding &e : m.bindings)
    see(e.op);
  for (const artifact::TensorEntry &t : m.tensors)
    see(t.name);
  if (hf && gguf)
    return makeError("model schema (", arch,
                     "): the artifact mixes Hugging Face names (\"", *hf,
                     "\") and GGUF names (\"", *gguf,
                     "\"); one checkpoint uses one naming");
  return gguf ? Naming::GGUF : Naming::HuggingFace;
}

/// A block linear: a bound quantized op, or a plain tensor kept in float.
struct Slot {
  const artifact::OpBinding *bound = nullptr;
  const artifact::PlainTensor *plain = nullptr;
  bool present() const { return bound || plain; }
  /// The whole [N, K] (a plain one is checked 2-D when recorded).
  std::pair<int64_t, int64_t> nk() const {
    return bound ? std::pair{bound->n, bound->k}
                 : std::pair{plain->shape[0], plain->shape[1]};
  }
};

/// Which dimension of which layer-0 linear gives a width.
struct WidthSource {
  size_t role;
  bool isN;
};

/// The width from layer 0: a bound op first (its shape is what the
/// kernels were compiled for), else a plain one.
int64_t widthOf(const std::array<Slot, kRoles> &layer0,
                std::initializer_list<WidthSource> from) {
  for (bool bound : {true, false})
    for (WidthSource s : from) {
      const Slot &slot = layer0[s.role];
      if (slot.present() && bool(slot.bound) == bound)
        return s.isN ? slot.nk().first : slot.nk().second;
    }
  return 0; // unreachable: layer 0 has every role when this runs
}

class SchemaChecker {
public:
  SchemaChecker(const artifact::Manifest &m, const models::Architecture &a,
                Naming naming)
      : m(m), a(a), naming(naming), n(models::tensorNames(naming)),
        arch(m.model.architecture) {}

  Expected<SchemaCheck> run() {
    QTENSOR_TRY(collectTraced());
    QTENSOR_TRY(collectPlain());
    QTENSOR_TRY(checkLinears());
    QTENSOR_TRY(checkPlainTensors());
    QTENSOR_TRY(checkHead());
    SchemaCheck out;
    out.known = true;
    out.naming =
        naming == Naming::GGUF ? TensorNaming::GGUF : TensorNaming::HuggingFace;
    out.layers = count;
    out.hidden = h;
    out.kv = kv;
    out.intermediate = inter;
    out.vocab = vocab;
    out.head = head;
    out.floatLinears = floatLinears;
    out.summary = summary();
    return out;
  }

private:
  template <typename... Parts> Error fail(const Parts &...parts) const {
    return makeError("model schema (", arch, "): ", parts...);
  }

  Status collectTraced() {
    for (const artifact::OpBinding &e : m.bindings) {
      if (e.op == n.head) {
        if (!headOp)
          headOp = &e;
      } else if (e.op == n.embed) {
        return fail("op \"", e.op,
                    "\" is the embedding, a gather that stays plain, not a "
                    "linear");
      } else if (auto l = models::parseLinearWeight(naming, e.op)) {
        Slot &s = layers[l->layer][size_t(l->linear)];
        if (!s.bound) // one binding per op
          s.bound = &e;
      } else {
        return fail("op \"", e.op, "\" is not a linear of the schema (",
                    n.linearPattern, ")");
      }
      // A bound op is a quantized tensor (or its rank slices).
      if (const artifact::TensorEntry *t = m.findTensor(e.op); t && t->plain())
        return fail("op \"", e.op,
                    "\" is bound as a quantized op, but the manifest stores it "
                    "plain (kept in float); a bound linear is quantized");
    }
    return Status::ok();
  }

  /// Block linears excluded from quantization, and the highest layer any
  /// block tensor (linear or norm) names.
  Status collectPlain() {
    for (const artifact::TensorEntry &t : m.tensors) {
      std::optional<models::BlockTensor> b =
          models::parseBlockTensor(naming, t.name);
      if (!b)
        continue;
      const auto &norms = n.normsOf(a);
      if (std::find(norms.begin(), norms.end(), b->inLayer) != norms.end())
        maxLayer = std::max(maxLayer, b->layer);
      std::optional<models::BlockLinearName> r =
          models::parseLinearWeight(naming, t.name);
      if (!r || !t.plain())
        continue;
      const artifact::PlainTensor &p = *t.plain();
      if (p.shape.size() != 2 || !safetensors::isFloatDType(p.dtype))
        return fail(t.name, " is stored plain as ",
                    safetensors::dtypeName(p.dtype), " ",
                    shapeToString(p.shape),
                    "; a linear kept in float is a 2-D float tensor [N, K]");
      layers[r->layer][size_t(r->linear)].plain = &p;
    }
    if (!layers.empty())
      maxLayer = std::max(maxLayer, layers.rbegin()->first);
    return Status::ok();
  }

  Status checkLinears() {
    if (layers.empty())
      return fail("no linear layers (none bound, none "
                  "stored plain as ",
                  n.linearPattern, ")");
    count = maxLayer + 1;
    for (int64_t l = 0; l < count; ++l) {
      auto it = layers.find(l);
      if (it == layers.end())
        return fail("layer ", l,
                    " is missing: none of its linears is bound or stored "
                    "(layers go up to ",
                    count - 1, ")");
      for (size_t r = 0; r < kRoles; ++r)
        if (!it->second[r].present())
          return fail(linearName(naming, l, r),
                      " is missing (neither a bound quantized op nor a "
                      "plain tensor)");
    }
    const std::array<Slot, kRoles> &first = layers.at(0);
    h = widthOf(first, {{Q, false},
                        {K, false},
                        {V, false},
                        {Gate, false},
                        {Up, false},
                        {O, true},
                        {Down, true}});
    qn = widthOf(first, {{Q, true}, {O, false}});
    kv = widthOf(first, {{K, true}, {V, true}});
    inter = widthOf(first, {{Gate, true}, {Up, true}, {Down, false}});
    // [N, K] every role must have.
    std::array<std::pair<int64_t, int64_t>, kRoles> want = {
        std::pair{qn, h}, {kv, h},    {kv, h},   {h, qn},
        {inter, h},       {inter, h}, {h, inter}};
    for (const auto &[l, roles] : layers)
      for (size_t r = 0; r < kRoles; ++r) {
        auto [N, K] = roles[r].nk();
        if (roles[r].plain)
          ++floatLinears;
        if (N != want[r].first || K != want[r].second)
          return fail(linearName(naming, l, r),
                      roles[r].plain ? " (kept in float)" : "", " is [", N,
                      ", ", K, "], expected [", want[r].first, ", ",
                      want[r].second, "] (H = ", h, ", KV = ", kv,
                      ", I = ", inter, ")");
      }
    return Status::ok();
  }

  Status requirePlain(std::string_view name,
                      const std::vector<int64_t> &shape) const {
    const artifact::TensorEntry *t = m.findTensor(name);
    if (!t)
      return fail("required tensor \"", name, "\" is missing");
    const std::vector<int64_t> &actual = t->logicalShape();
    if (actual != shape)
      return fail("tensor \"", name, "\" has shape ", shapeToString(actual),
                  ", expected ", shapeToString(shape));
    return Status::ok();
  }

  Status checkPlainTensors() {
    const artifact::TensorEntry *embed = m.findTensor(n.embed);
    const artifact::TensorEntry *quantizedHead = m.findTensor(n.head);
    if (!embed && headOp && quantizedHead && quantizedHead->quantized()) {
      // A tied head's codes are the embedding's rows (the program's embed
      // names the head): nothing else is stored for it.
      vocab = headOp->n;
      embedFromHead = true;
    } else if (embed && embed->quantized() &&
               embed->quantized()->use == artifact::TensorUse::Embedding &&
               embed->quantized()->logical.shape.size() == 2) {
      // A quantized table of its own, gathered from its codes.
      vocab = embed->quantized()->logical.shape[0];
      if (embed->quantized()->logical.shape[1] != h)
        return fail("the embedding ", n.embed, " has ",
                    embed->quantized()->logical.shape[1], " columns, expected ",
                    h);
    } else {
      if (!embed || !embed->plain() || embed->plain()->shape.size() != 2)
        return fail("the embedding ", n.embed,
                    " is missing or not a plain 2-D tensor");
      vocab = embed->plain()->shape[0];
      QTENSOR_TRY(requirePlain(n.embed, {vocab, h}));
    }
    QTENSOR_TRY(requirePlain(n.finalNorm, {h}));
    using models::BlockNorm;
    for (int64_t l = 0; l < count; ++l)
      for (BlockNorm norm : {BlockNorm::Attention, BlockNorm::Mlp})
        QTENSOR_TRY(
            requirePlain(*models::normWeightName(naming, a, l, norm), {h}));
    if (a.sandwichNorms)
      for (int64_t l = 0; l < count; ++l)
        for (BlockNorm norm : {BlockNorm::PostAttention, BlockNorm::PostMlp}) {
          QTENSOR_ASSIGN_OR_RETURN(std::string name, blockNormName(l, norm));
          QTENSOR_TRY(requirePlain(name, {h}));
        }
    if (a.qkNorm)
      QTENSOR_TRY(checkHeadNorms());
    return Status::ok();
  }

  /// A norm of the family (the table names each family's norms in both
  /// namings; a norm it does not have is an error, not a name).
  Expected<std::string> blockNormName(int64_t layer, models::BlockNorm norm) {
    std::optional<std::string> name =
        models::normWeightName(naming, a, layer, norm);
    if (!name)
      return fail(arch, " has no such block norm in ", models::toString(naming),
                  " names");
    return *name;
  }

  /// qwen3's and gemma's per-head q and k norms: one head width D for
  /// both, dividing the q and kv widths.
  Status checkHeadNorms() {
    using models::BlockNorm;
    QTENSOR_ASSIGN_OR_RETURN(std::string q0Name,
                             blockNormName(0, BlockNorm::QHead));
    const artifact::TensorEntry *q0 = m.findTensor(q0Name);
    if (!q0 || !q0->plain() || q0->plain()->shape.size() != 1)
      return fail("the per-head q norm ", q0Name,
                  " is missing or not a plain 1-D tensor");
    const int64_t d = q0->plain()->shape[0];
    if (d < 1 || qn % d || kv % d)
      return fail(q0Name, " is [", d, "], which is no head width of q (", qn,
                  ") and kv (", kv, ")");
    for (int64_t l = 0; l < count; ++l)
      for (BlockNorm norm : {BlockNorm::QHead, BlockNorm::KHead}) {
        QTENSOR_ASSIGN_OR_RETURN(std::string name, blockNormName(l, norm));
        QTENSOR_TRY(requirePlain(name, {d}));
      }
    return Status::ok();
  }

  /// Tied (absent), plain [vocab, H], or a bound quantized [vocab, H].
  Status checkHead() {
    if (headOp) {
      if (headOp->n != vocab || headOp->k != h)
        return fail("op \"", n.head, "\" (the quantized head) is [", headOp->n,
                    ", ", headOp->k, "], expected [", vocab, ", ", h,
                    "] ([vocab, H])");
      head = HeadKind::Quantized;
      return Status::ok();
    }
    const artifact::TensorEntry *t = m.findTensor(n.head);
    if (!t)
      return Status::ok();
    if (!t->plain())
      return fail("the head ", n.head,
                  " is quantized, but no op binding names it");
    QTENSOR_TRY(requirePlain(n.head, {vocab, h}));
    head = HeadKind::Plain;
    return Status::ok();
  }

  std::string summary() const {
    std::string s = arch + ": " + std::to_string(count) + " layers, H " +
                    std::to_string(h) + ", KV " + std::to_string(kv) + ", I " +
                    std::to_string(inter) + ", vocab " + std::to_string(vocab);
    if (head == HeadKind::Tied)
      s += ", tied head";
    else if (head == HeadKind::Quantized)
      s += embedFromHead ? ", tied head quantized (its codes are the "
                           "embedding)"
                         : ", head quantized";
    int64_t total = count * kRoles;
    if (floatLinears == total)
      s += ", all " + std::to_string(total) +
           " linears kept in float (nothing to dispatch)";
    else if (floatLinears)
      s += ", " + std::to_string(floatLinears) +
           (floatLinears == 1 ? " linear" : " linears") + " kept in float";
    if (naming == Naming::GGUF)
      s += ", gguf names";
    return s;
  }

  const artifact::Manifest &m;
  const models::Architecture &a;
  const Naming naming;
  const models::TensorNames &n;
  const std::string &arch;

  std::map<int64_t, std::array<Slot, kRoles>> layers;
  const artifact::OpBinding *headOp = nullptr;
  int64_t maxLayer = -1, count = 0, h = 0, qn = 0, kv = 0, inter = 0, vocab = 0;
  bool embedFromHead = false; ///< no embedding tensor: the head's codes
  int64_t floatLinears = 0;
  HeadKind head = HeadKind::Tied;
};

} // namespace

Expected<SchemaCheck>
qtensor::runtime::checkModelSchema(const artifact::Manifest &m) {
  const std::string &arch = m.model.architecture;
  const models::Architecture *a = models::findArchitecture(arch);
  if (!a || !a->hasSchema) {
    SchemaCheck out;
    out.summary = "no schema for architecture \"" + arch +
                  "\": every quantized tensor checked as a bound 2-D linear";
    return out;
  }
  QTENSOR_ASSIGN_OR_RETURN(Naming naming, chooseNaming(m, arch));
  return SchemaChecker(m, *a, naming).run();
}
