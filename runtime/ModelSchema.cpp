//===- ModelSchema.cpp - The tensors an architecture requires -------------===//

#include "qtensor/Runtime/ModelSchema.h"

#include "qtensor/Formats/SafetensorsDType.h"
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

enum { Q, K, V, O, Gate, Up, Down, kRoles };

/// One checkpoint naming of the llama family; linears in the enum's order.
struct Naming {
  const char *label;       ///< for errors
  const char *layerPrefix; ///< then "<L>.<role>.weight"
  std::array<const char *, kRoles> linears;
  std::array<const char *, 2> norms; ///< before attention, before the MLP
  const char *embed, *finalNorm, *head;
  const char *pattern; ///< the ops a manifest may bind, for errors
};

const Naming kHuggingFace = {
    "Hugging Face",
    "model.layers.",
    {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
     "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"},
    {"input_layernorm", "post_attention_layernorm"},
    "model.embed_tokens.weight",
    "model.norm.weight",
    "lm_head.weight",
    "model.layers.<L>.<self_attn|mlp>.<proj>.weight, or lm_head.weight"};

const Naming kGGUF = {
    "GGUF",
    "blk.",
    {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
     "ffn_down"},
    {"attn_norm", "ffn_norm"},
    "token_embd.weight",
    "output_norm.weight",
    "output.weight",
    "blk.<L>.<attn_q|attn_k|attn_v|attn_output|ffn_gate|ffn_up|ffn_down>"
    ".weight, or output.weight"};

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool startsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

/// "<prefix><L>.<role>.weight" -> (L, role); none for any other name (a
/// layer number with a leading zero names no layer).
std::optional<std::pair<int64_t, std::string_view>>
parseBlock(const Naming &n, std::string_view name) {
  constexpr std::string_view suffix = ".weight";
  std::string_view prefix = n.layerPrefix;
  if (name.size() <= prefix.size() + suffix.size() ||
      !startsWith(name, prefix) || !endsWith(name, suffix))
    return std::nullopt;
  std::string_view s =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  int64_t layer = 0;
  size_t digits = 0;
  while (digits < s.size() && digits < 7 && isDigit(s[digits]))
    layer = layer * 10 + (s[digits++] - '0');
  if (!digits || (digits > 1 && s[0] == '0') || digits >= s.size() ||
      s[digits] != '.')
    return std::nullopt;
  return std::pair{layer, s.substr(digits + 1)};
}

template <size_t N>
std::optional<size_t> indexOf(const std::array<const char *, N> &names,
                              std::string_view role) {
  for (size_t i = 0; i < N; ++i)
    if (role == names[i])
      return i;
  return std::nullopt;
}

/// The (layer, linear role) `name` is in naming `n`, if any.
std::optional<std::pair<int64_t, size_t>> parseLinear(const Naming &n,
                                                      const std::string &name) {
  auto b = parseBlock(n, name);
  if (!b)
    return std::nullopt;
  std::optional<size_t> r = indexOf(n.linears, b->second);
  if (!r)
    return std::nullopt;
  return std::pair{b->first, *r};
}

std::string blockName(const Naming &n, int64_t layer, const char *role) {
  return n.layerPrefix + std::to_string(layer) + "." + role + ".weight";
}

/// Whether `name` (without its rank suffix) is one of `n`'s own names.
bool usesNaming(const Naming &n, const std::string &name) {
  std::string_view prefix = n.layerPrefix;
  return (name.size() > prefix.size() && startsWith(name, prefix) &&
          isDigit(name[prefix.size()])) ||
         name == n.embed || name == n.finalNorm || name == n.head;
}

/// The naming of the artifact's names; both at once is an error.
Expected<const Naming *> chooseNaming(const artifact::Manifest &m,
                                      const std::string &arch) {
  std::optional<std::string> hf, gguf;
  auto see = [&](const std::string &raw) {
    std::string name = splitRankName(raw).first;
    if (!hf && usesNaming(kHuggingFace, name))
      hf = name;
    if (!gguf && usesNaming(kGGUF, name))
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
  return gguf ? &kGGUF : &kHuggingFace;
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
  SchemaChecker(const artifact::Manifest &m, const Naming &n)
      : m(m), n(n), arch(m.model.architecture) {}

  Expected<SchemaCheck> run() {
    QTENSOR_TRY(collectTraced());
    QTENSOR_TRY(collectPlain());
    QTENSOR_TRY(checkLinears());
    QTENSOR_TRY(checkPlainTensors());
    QTENSOR_TRY(checkHead());
    SchemaCheck out;
    out.known = true;
    out.naming = &n == &kGGUF ? TensorNaming::GGUF : TensorNaming::HuggingFace;
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
      } else if (auto l = parseLinear(n, e.op)) {
        Slot &s = layers[l->first][l->second];
        if (!s.bound) // one binding per op
          s.bound = &e;
      } else {
        return fail("op \"", e.op, "\" is not a linear of the schema (",
                    n.pattern, ")");
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
      auto b = parseBlock(n, t.name);
      if (!b)
        continue;
      std::optional<size_t> r = indexOf(n.linears, b->second);
      if (indexOf(n.norms, b->second))
        maxLayer = std::max(maxLayer, b->first);
      if (!r || !t.plain())
        continue;
      const artifact::PlainTensor &p = *t.plain();
      if (p.shape.size() != 2 || !safetensors::isFloatDType(p.dtype))
        return fail(t.name, " is stored plain as ",
                    safetensors::dtypeName(p.dtype), " ",
                    shapeToString(p.shape),
                    "; a linear kept in float is a 2-D float tensor [N, K]");
      layers[b->first][*r].plain = &p;
    }
    if (!layers.empty())
      maxLayer = std::max(maxLayer, layers.rbegin()->first);
    return Status::ok();
  }

  Status checkLinears() {
    if (layers.empty())
      return fail("no linear layers (none bound, none "
                  "stored plain as ",
                  n.pattern, ")");
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
          return fail(blockName(n, l, n.linears[r]),
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
    int64_t qn = widthOf(first, {{Q, true}, {O, false}});
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
          return fail(blockName(n, l, n.linears[r]),
                      roles[r].plain ? " (kept in float)" : "", " is [", N,
                      ", ", K, "], expected [", want[r].first, ", ",
                      want[r].second, "] (H = ", h, ", KV = ", kv,
                      ", I = ", inter, ")");
      }
    return Status::ok();
  }

  Status requirePlain(const std::string &name,
                      const std::vector<int64_t> &shape) const {
    const artifact::TensorEntry *t = m.findTensor(name);
    if (!t)
      return fail("required tensor \"", name, "\" is missing");
    const std::vector<int64_t> &actual =
        t->plain() ? t->plain()->shape : t->quantized()->logical.shape;
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
    } else {
      if (!embed || !embed->plain() || embed->plain()->shape.size() != 2)
        return fail("the embedding ", n.embed,
                    " is missing or not a plain 2-D tensor");
      vocab = embed->plain()->shape[0];
      QTENSOR_TRY(requirePlain(n.embed, {vocab, h}));
    }
    QTENSOR_TRY(requirePlain(n.finalNorm, {h}));
    for (int64_t l = 0; l < count; ++l)
      for (const char *norm : n.norms)
        QTENSOR_TRY(requirePlain(blockName(n, l, norm), {h}));
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
    if (&n == &kGGUF)
      s += ", gguf names";
    return s;
  }

  const artifact::Manifest &m;
  const Naming &n;
  const std::string &arch;

  std::map<int64_t, std::array<Slot, kRoles>> layers;
  const artifact::OpBinding *headOp = nullptr;
  int64_t maxLayer = -1, count = 0, h = 0, kv = 0, inter = 0, vocab = 0;
  bool embedFromHead = false; ///< no embedding tensor: the head's codes
  int64_t floatLinears = 0;
  HeadKind head = HeadKind::Tied;
};

} // namespace

Expected<SchemaCheck>
qtensor::runtime::checkModelSchema(const artifact::Manifest &m) {
  const std::string &arch = m.model.architecture;
  if (arch != "llama" && arch != "mistral" && arch != "qwen2") {
    SchemaCheck out;
    out.summary = "no schema for architecture \"" + arch +
                  "\": every quantized tensor checked as a bound 2-D linear";
    return out;
  }
  QTENSOR_ASSIGN_OR_RETURN(const Naming *n, chooseNaming(m, arch));
  return SchemaChecker(m, *n).run();
}
