//===- Selection.cpp - Which weights qtc compile quantizes ----------------===//

#include "Selection.h"

#include "qtensor/Formats/GGUFDescriptor.h"
#include "qtensor/Kernels/Admission.h"
#include "qtensor/Kernels/Registry.h"

#include <fnmatch.h>

namespace qtensor::compiler {
namespace {

bool matches(const std::string &pattern, const std::string &name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

bool contains(const std::string &s, const char *part) {
  return s.find(part) != std::string::npos;
}

/// The first pattern of `patterns` that matches `name`, or -1.
int firstMatch(const std::vector<std::string> &patterns,
               const std::string &name) {
  for (size_t i = 0; i < patterns.size(); ++i)
    if (matches(patterns[i], name))
      return static_cast<int>(i);
  return -1;
}

} // namespace

const char *tensorKindName(TensorKind kind) {
  switch (kind) {
  case TensorKind::Linear:
    return "linear";
  case TensorKind::Head:
    return "output head";
  case TensorKind::Embedding:
    return "embedding";
  case TensorKind::Norm:
    return "norm";
  case TensorKind::Other:
    break;
  }
  return "other tensor";
}

Expected<WeightSelection>
WeightSelection::create(std::vector<std::string> excludes,
                        std::vector<std::string> includes) {
  for (const auto *list : {&excludes, &includes})
    for (const std::string &p : *list)
      if (p.empty())
        return makeError(list == &excludes ? "--exclude" : "--include",
                         ": an empty pattern");
  WeightSelection s;
  s.exclude = std::move(excludes);
  s.include = std::move(includes);
  s.excludeUsed.assign(s.exclude.size(), false);
  s.includeUsed.assign(s.include.size(), false);
  s.excludeBias.assign(s.exclude.size(), "");
  s.includeBias.assign(s.include.size(), "");
  return s;
}

Status WeightSelection::setTarget(const std::string &name) {
  std::optional<kernels::Target> t = kernels::parseTarget(name);
  if (!t)
    return makeError("target ", name, " is not a kernel target");
  target = *t;
  return Status::ok();
}

bool WeightSelection::targetReads(GGMLType type) const {
  // The type's codes as the GGUF reader spells them, on a nominal 256 x 256
  // weight (every K-quant super-block and GPU tile fits), in the layout
  // the exporter keeps them in: does any native kernel admit them?
  GGUFTensorInfo info{"w", type, {256, 256}, 65536, 0, 0, 0, nullptr, 0};
  auto described = describeGGUFTensor(info);
  return described && described->affine &&
         targetReads(described->affine->descriptor);
}

bool WeightSelection::targetReads(const AffineDescriptor &codes) const {
  kernels::OpSignature sig;
  sig.descriptor = codes;
  sig.n = sig.k = 256;
  sig.ranks = {{0, 256, 0, 256}};
  const kernels::KernelRegistry &registry = kernels::builtinRegistry();
  for (const kernels::KernelCapability &k : registry.kernels)
    if (!k.fullDequant &&
        kernels::admit(registry, k, sig,
                       {kernels::Phase::Decode,
                        kernels::phaseTokens(kernels::Phase::Decode)},
                       target, kernels::FallbackPolicy::Forbid)
            .accepted())
      return true;
  return false;
}

Expected<SelectionDecision>
WeightSelection::decideStored(const std::string &name, TensorKind kind,
                              const std::string &dtype,
                              const AffineDescriptor *storedCodes) {
  QTENSOR_ASSIGN_OR_RETURN(SelectionDecision d, decide(name, kind));
  const bool isFloat = dtype == "F32" || dtype == "F16" || dtype == "BF16";
  // The ggml types whose codes the compiler keeps (GGUFDescriptor.h), or
  // the described codes of a packed linear, that a native kernel of the
  // target reads.
  auto type = ggmlTypeFromName(dtype);
  const bool keepsCodes =
      !isFloat &&
      (storedCodes ? targetReads(*storedCodes)
                   : type && hasAffineSpelling(*type) && targetReads(*type));
  if (!d.quantize && d.byDefault && keepFloat && keepsCodes &&
      kind == TensorKind::Head)
    d = {true,
         "--quant keep: the head is stored as " + dtype +
             "; its codes are kept (--exclude keeps it in float)",
         true};
  if (d.quantize && keepFloat && isFloat)
    d = {false, "--quant keep: stored as " + dtype + ", kept in float"};
  else if (d.quantize && decodeNoKernel && !isFloat && !keepsCodes)
    d = {false, "--quant keep --fallback allow: no " + target.name +
                    " kernel reads " + dtype +
                    " codes yet; decoded to F32 and kept in float"};
  return d;
}

Expected<SelectionDecision> WeightSelection::decide(const std::string &name,
                                                    TensorKind kind) {
  int ex = firstMatch(exclude, name), in = firstMatch(include, name);
  if (ex >= 0)
    excludeUsed[ex] = true;
  if (in >= 0)
    includeUsed[in] = true;
  if (ex >= 0 && in >= 0)
    return makeError(name, " matches both --exclude '", exclude[ex],
                     "' and --include '", include[in], "'");
  bool linear = kind == TensorKind::Linear || kind == TensorKind::Head;
  if (in >= 0 && !linear)
    return makeError(
        "--include '", include[in], "' selects ", name, ", which is ",
        std::string("aeiou").find(tensorKindName(kind)[0]) != std::string::npos
            ? "an "
            : "a ",
        tensorKindName(kind),
        ", not a linear: qtc quantizes linear weights only (a "
        "lookup or a norm has no quantized kernel)");
  if (ex >= 0)
    return SelectionDecision{false, "--exclude '" + exclude[ex] + "'"};
  if (in >= 0)
    return SelectionDecision{true, "--include '" + include[in] + "'"};
  if (kind == TensorKind::Linear)
    return SelectionDecision{true, "linear", true};
  return SelectionDecision{
      false, std::string("default: ") + tensorKindName(kind), true};
}

void WeightSelection::noteBias(const std::string &name) {
  for (size_t i = 0; i < exclude.size(); ++i)
    if (matches(exclude[i], name))
      excludeBias[i] = name;
  for (size_t i = 0; i < include.size(); ++i)
    if (matches(include[i], name))
      includeBias[i] = name;
}

Status WeightSelection::checkAllPatternsUsed(const std::string &input) const {
  auto check = [&](const char *flag, const std::vector<std::string> &patterns,
                   const std::vector<bool> &used,
                   const std::vector<std::string> &bias) -> Status {
    for (size_t i = 0; i < patterns.size(); ++i) {
      if (used[i])
        continue;
      if (!bias[i].empty())
        return makeError(flag, " '", patterns[i], "' matches only biases (",
                         bias[i],
                         "); a bias follows its linear: select the "
                         "linear's weight");
      return makeError(flag, " '", patterns[i], "' matches no tensor of ",
                       input);
    }
    return Status::ok();
  };
  QTENSOR_TRY(check("--exclude", exclude, excludeUsed, excludeBias));
  return check("--include", include, includeUsed, includeBias);
}

TensorKind kindFromName(const std::string &name) {
  if (name == "lm_head.weight" || name == "output.weight" ||
      name == "embed_out.weight")
    return TensorKind::Head;
  if (contains(name, "embed") || contains(name, "embd") ||
      name == "wte.weight" || name == "transformer.wte.weight")
    return TensorKind::Embedding;
  if (contains(name, "norm"))
    return TensorKind::Norm;
  return TensorKind::Other;
}

bool isEmbeddingName(const std::string &name) {
  for (const char *known :
       {"model.embed_tokens.weight", "embed_tokens.weight", "token_embd.weight",
        "transformer.wte.weight", "wte.weight", "tok_embeddings.weight",
        "embeddings.word_embeddings.weight"})
    if (name == known)
      return true;
  return false;
}

} // namespace qtensor::compiler
