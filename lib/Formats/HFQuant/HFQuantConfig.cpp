//===- HFQuantConfig.cpp - config.json's quantization_config --------------===//
//
// What each method declares, read strictly enough to refuse what this
// reader does not implement by name: a misread packing would keep wrong
// codes without a trace, so anything unknown in the fields that change the
// meaning of the bytes is an error.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/HFQuantized.h"

#include <nlohmann/json.hpp>

#include <regex>

using namespace qtensor;
using namespace qtensor::hfquant;
using nlohmann::json;

namespace {

/// A JSON reader of one object whose unknown keys are allowed (tuning
/// fields such as damp_percent do not change the stored bytes).
struct Fields {
  const json &object;
  std::string path;

  const json *find(const char *key) const {
    auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }
  Status boolean(const char *key, bool fallback, bool &out) const {
    const json *v = find(key);
    if (!v) {
      out = fallback;
      return Status::ok();
    }
    if (!v->is_boolean())
      return makeError(path, ".", key, ": expected true or false, got ",
                       v->dump());
    out = v->get<bool>();
    return Status::ok();
  }
  Status integer(const char *key, std::optional<int64_t> fallback,
                 int64_t &out) const {
    const json *v = find(key);
    if (!v) {
      if (!fallback)
        return makeError(path, ": missing integer field \"", key, "\"");
      out = *fallback;
      return Status::ok();
    }
    if (!v->is_number_integer())
      return makeError(path, ".", key, ": expected an integer, got ",
                       v->dump());
    out = v->get<int64_t>();
    return Status::ok();
  }
  Status string(const char *key, std::optional<std::string> fallback,
                std::string &out) const {
    const json *v = find(key);
    if (!v) {
      if (!fallback)
        return makeError(path, ": missing string field \"", key, "\"");
      out = *fallback;
      return Status::ok();
    }
    if (!v->is_string())
      return makeError(path, ".", key, ": expected a string, got ", v->dump());
    out = v->get<std::string>();
    return Status::ok();
  }
  Status strings(const char *key, std::vector<std::string> &out) const {
    const json *v = find(key);
    if (!v)
      return Status::ok();
    if (!v->is_array())
      return makeError(path, ".", key, ": expected an array of strings");
    for (const json &s : *v) {
      if (!s.is_string())
        return makeError(path, ".", key,
                         ": expected an array of strings, "
                         "found ",
                         s.dump());
      out.push_back(s.get<std::string>());
    }
    return Status::ok();
  }
};

/// A group size as the configs spell it: -1 (or 0) means one group per
/// output channel.
Status groupSize(const Fields &f, const char *key, int64_t &out) {
  QTENSOR_TRY(f.integer(key, int64_t(-1), out));
  if (out == -1 || out == 0) {
    out = 0;
    return Status::ok();
  }
  if (out < 1 || out > (int64_t(1) << 20))
    return makeError(f.path, ".", key, ": group size ", out,
                     " is not -1 or in [1, 2^20]");
  return Status::ok();
}

std::string groupText(int64_t g) {
  return g > 0 ? " g" + std::to_string(g) : g == 0 ? " per-channel" : " tensor";
}

/// An FP8 block shape [rows, columns] (`weight_block_size`, or
/// compressed-tensors' `block_structure`, also spelled "RxC") into the
/// scheme: groups of `columns` along K, `rows` output rows per scale.
Status blockShape(const Fields &f, const char *key, WeightScheme &s) {
  const json *v = f.find(key);
  std::vector<int64_t> dims;
  if (v && v->is_array()) {
    for (const json &d : *v)
      dims.push_back(d.is_number_integer() ? d.get<int64_t>() : -1);
  } else if (v && v->is_string()) {
    const std::string text = v->get<std::string>();
    const size_t x = text.find('x');
    if (x != std::string::npos && text.find('x', x + 1) == std::string::npos &&
        text.find_first_not_of("0123456789x") == std::string::npos && x > 0 &&
        x + 1 < text.size() && x < 8 && text.size() - x < 9)
      dims = {std::stoll(text.substr(0, x)), std::stoll(text.substr(x + 1))};
  }
  if (!v)
    return makeError(f.path, ": missing block shape \"", key, "\"");
  const int64_t limit = int64_t(1) << 20;
  if (dims.size() != 2 || dims[0] < 1 || dims[0] > limit || dims[1] < 1 ||
      dims[1] > limit)
    return makeError(f.path, ".", key,
                     ": expected [rows, columns], two integers in [1, 2^20], "
                     "got ",
                     v->dump());
  s.blockRows = dims[0];
  s.groupSize = dims[1];
  return Status::ok();
}

std::string blockText(const WeightScheme &s) {
  return " " + std::to_string(s.blockRows) + "x" + std::to_string(s.groupSize) +
         " blocks";
}

/// A dynamic FP8 activation scheme is per-token scaling at run time: no
/// stored scale, nothing to misread. Such activations run in 16 bits (the
/// report's text says so).
const char *kDynamicActivations =
    "; its dynamic FP8 activations run in 16 bits";

Expected<QuantizationConfig> parseGPTQ(const Fields &f) {
  QuantizationConfig c;
  c.method = Method::GPTQ;
  WeightScheme s;
  s.method = Method::GPTQ;
  s.storage = Storage::PackedAlongK;
  int64_t bits = 0;
  QTENSOR_TRY(f.integer("bits", std::nullopt, bits));
  if (bits == 3)
    return makeError(f.path, ".bits: 3-bit gptq packs codes across int32 "
                             "words, which this reader does not implement "
                             "(2, 4 and 8 are read)");
  if (bits != 2 && bits != 4 && bits != 8)
    return makeError(f.path, ".bits: ", bits, " is not 2, 4 or 8");
  s.bits = unsigned(bits);
  QTENSOR_TRY(groupSize(f, "group_size", s.groupSize));
  QTENSOR_TRY(f.boolean("sym", true, s.symmetric));
  bool descAct = false, marlin = false;
  QTENSOR_TRY(f.boolean("desc_act", false, descAct));
  QTENSOR_TRY(f.boolean("is_marlin_format", false, marlin));
  std::string format;
  QTENSOR_TRY(f.string("checkpoint_format", std::string("gptq"), format));
  if (marlin || format == "marlin")
    return makeError(f.path, ": the marlin checkpoint format repacks codes "
                             "for one kernel; only gptq and gptq_v2 are read");
  if (format != "gptq" && format != "gptq_v2")
    return makeError(f.path, ".checkpoint_format: \"", format,
                     "\" is not gptq or gptq_v2");
  if (const json *dyn = f.find("dynamic"); dyn && !dyn->empty())
    return makeError(f.path, ".dynamic: per-module overrides are not read");
  s.zeroMinusOne = format == "gptq";
  c.text = "gptq " + std::to_string(bits) + "-bit" + groupText(s.groupSize) +
           (s.symmetric ? " sym" : " asym") + (descAct ? " desc_act" : "") +
           " " + format;
  c.groups.push_back({{"Linear"}, s});
  return c;
}

Expected<QuantizationConfig> parseAWQ(const Fields &f) {
  QuantizationConfig c;
  c.method = Method::AWQ;
  WeightScheme s;
  s.method = Method::AWQ;
  s.storage = Storage::PackedAlongN;
  int64_t bits = 0;
  QTENSOR_TRY(f.integer("bits", std::nullopt, bits));
  if (bits != 4)
    return makeError(f.path, ".bits: awq packs 4-bit codes; got ", bits);
  s.bits = 4;
  QTENSOR_TRY(groupSize(f, "group_size", s.groupSize));
  bool zeroPoint = true;
  QTENSOR_TRY(f.boolean("zero_point", true, zeroPoint));
  if (!zeroPoint)
    return makeError(f.path, ".zero_point: awq without zero-points is not "
                             "read (every published awq packing has them)");
  std::string version;
  QTENSOR_TRY(f.string("version", std::string("gemm"), version));
  for (char &ch : version)
    ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (version != "gemm")
    return makeError(f.path, ".version: \"", version,
                     "\" packs codes for one kernel; only the gemm packing "
                     "is read");
  QTENSOR_TRY(f.strings("modules_to_not_convert", c.ignore));
  c.text = "awq 4-bit" + groupText(s.groupSize) + " gemm";
  c.groups.push_back({{"Linear"}, s});
  return c;
}

/// NVFP4 (llm-compressor's NVFP4 and NVFP4A16 schemes): 4-bit floats in
/// groups of 16 under E4M3 scales and one f32 divisor per tensor.
Expected<WeightScheme> parseNVFP4Weights(const Fields &w, WeightScheme s) {
  std::string type, strategy;
  int64_t bits = 0;
  QTENSOR_TRY(w.string("type", std::string("int"), type));
  QTENSOR_TRY(w.integer("num_bits", std::nullopt, bits));
  QTENSOR_TRY(w.string("strategy", std::nullopt, strategy));
  if (type != "float" || bits != 4)
    return makeError(w.path,
                     ": nvfp4-pack-quantized holds 4-bit float "
                     "weights, got ",
                     bits, "-bit ", type);
  if (strategy != "tensor_group")
    return makeError(w.path, ".strategy: \"", strategy,
                     "\" is not read for NVFP4 (tensor_group)");
  QTENSOR_TRY(w.integer("group_size", std::nullopt, s.groupSize));
  if (s.groupSize != 16)
    return makeError(w.path, ".group_size: NVFP4 scales groups of 16, got ",
                     s.groupSize);
  QTENSOR_TRY(w.boolean("symmetric", true, s.symmetric));
  if (!s.symmetric)
    return makeError(w.path, ".symmetric: NVFP4 weights are symmetric");
  bool dynamic = false;
  QTENSOR_TRY(w.boolean("dynamic", false, dynamic));
  if (dynamic)
    return makeError(w.path, ".dynamic: dynamic weight scales are not read");
  s.bits = 4;
  return s;
}

Expected<WeightScheme> parseCTWeights(const Fields &w,
                                      const std::string &format) {
  WeightScheme s;
  s.method = Method::CompressedTensors;
  if (format == "pack-quantized")
    s.storage = Storage::PackedOffsetK;
  else if (format == "int-quantized" || format == "naive-quantized")
    s.storage = Storage::Int8;
  else if (format == "float-quantized")
    s.storage = Storage::Float8E4M3;
  else if (format == "nvfp4-pack-quantized")
    s.storage = Storage::NVFP4Packed;
  else
    return makeError(w.path, ": format \"", format,
                     "\" is not read (pack-quantized, int-quantized, "
                     "naive-quantized, float-quantized, nvfp4-pack-quantized)");
  if (s.storage == Storage::NVFP4Packed)
    return parseNVFP4Weights(w, s);
  const bool fp8 = s.storage == Storage::Float8E4M3;
  std::string type;
  QTENSOR_TRY(w.string("type", std::string("int"), type));
  if (type != (fp8 ? "float" : "int"))
    return makeError(w.path, ".type: \"", type, "\" weights are not read in ",
                     format, " (", fp8 ? "float" : "int", " is)");
  int64_t bits = 0;
  QTENSOR_TRY(w.integer("num_bits", std::nullopt, bits));
  if (fp8 && bits != 8)
    return makeError(w.path, ".num_bits: ", bits,
                     " float bits are not read (8: FP8 E4M3)");
  if (s.storage == Storage::PackedOffsetK && bits != 2 && bits != 4 &&
      bits != 8)
    return makeError(w.path, ".num_bits: ", bits,
                     " is not 2, 4 or 8 (pack-quantized)");
  if (s.storage == Storage::Int8 && (bits < 2 || bits > 8))
    return makeError(w.path, ".num_bits: ", bits, " is not in [2, 8]");
  s.bits = unsigned(bits);
  QTENSOR_TRY(w.boolean("symmetric", true, s.symmetric));
  bool dynamic = false;
  QTENSOR_TRY(w.boolean("dynamic", false, dynamic));
  if (dynamic)
    return makeError(w.path, ".dynamic: dynamic weight scales are not read");
  if (fp8 && !s.symmetric)
    return makeError(w.path, ".symmetric: FP8 weights are symmetric");
  std::string strategy;
  QTENSOR_TRY(w.string("strategy", std::nullopt, strategy));
  if (fp8 && strategy != "channel" && strategy != "tensor" &&
      strategy != "block")
    return makeError(w.path, ".strategy: \"", strategy,
                     "\" is not read for FP8 weights (channel, tensor, block)");
  if (strategy == "block") {
    if (!fp8)
      return makeError(w.path, ".strategy: block scales are read for FP8 "
                               "weights only");
    QTENSOR_TRY(blockShape(w, "block_structure", s));
  } else if (strategy == "group") {
    QTENSOR_TRY(groupSize(w, "group_size", s.groupSize));
    if (s.groupSize == 0)
      return makeError(w.path, ".group_size: strategy group needs a size");
  } else if (strategy == "channel") {
    s.groupSize = 0;
  } else if (strategy == "tensor") {
    s.groupSize = -1;
  } else {
    return makeError(w.path, ".strategy: \"", strategy,
                     "\" is not read (group, channel, tensor)");
  }
  // actorder changes only how g_idx was found; weight_g_idx, when stored,
  // says what it means.
  if (const json *a = w.find("actorder");
      a && !a->is_boolean() &&
      !(a->is_string() &&
        (*a == "group" || *a == "weight" || *a == "static" || *a == "dynamic")))
    return makeError(w.path, ".actorder: unexpected ", a->dump());
  return s;
}

Expected<QuantizationConfig> parseCompressedTensors(const Fields &f) {
  QuantizationConfig c;
  c.method = Method::CompressedTensors;
  std::string format, status;
  QTENSOR_TRY(f.string("format", std::string("dense"), format));
  QTENSOR_TRY(
      f.string("quantization_status", std::string("compressed"), status));
  if (status != "compressed")
    return makeError(f.path, ".quantization_status: \"", status,
                     "\": only compressed checkpoints store codes");
  if (f.find("sparsity_config"))
    return makeError(f.path, ".sparsity_config: sparse compression is not "
                             "read");
  QTENSOR_TRY(f.strings("ignore", c.ignore));
  const json *groups = f.find("config_groups");
  if (!groups || !groups->is_object() || groups->empty())
    return makeError(f.path, ": config_groups must be a non-empty object");
  for (const auto &[name, group] : groups->items()) {
    Fields g{group, f.path + ".config_groups." + name};
    if (!group.is_object())
      return makeError(g.path, ": not an object");
    std::string groupFormat;
    QTENSOR_TRY(g.string("format", format, groupFormat));
    if (g.find("output_activations"))
      return makeError(g.path, ".output_activations: output quantization is "
                               "not supported");
    // FP8 checkpoints (llm-compressor's FP8_DYNAMIC) declare per-token
    // dynamic FP8 activations: no stored scale, nothing to misread. They
    // are run in 16 bits, and the report's text says so. Anything static
    // would carry calibrated scales: refused.
    // NVFP4 (W4A4) declares FP4 activations scaled per group at run time
    // ("local") under a calibrated per-tensor scale: they run in 16 bits
    // too, the input_global_scale read past, and the report says so.
    std::string activations;
    if (const json *act = g.find("input_activations"); act && !act->is_null()) {
      Fields a{*act, g.path + ".input_activations"};
      const bool nvfp4 = groupFormat == "nvfp4-pack-quantized";
      const json *dyn = act->is_object() ? a.find("dynamic") : nullptr;
      const bool dynamic =
          dyn && ((dyn->is_boolean() && dyn->get<bool>()) ||
                  (nvfp4 && dyn->is_string() && *dyn == "local"));
      std::string type;
      int64_t bits = 0;
      if (!act->is_object() || (groupFormat != "float-quantized" && !nvfp4) ||
          !dynamic || !a.string("type", std::string("int"), type) ||
          type != "float" || !a.integer("num_bits", std::nullopt, bits) ||
          bits != (nvfp4 ? 4 : 8))
        return makeError(a.path, ": activation quantization is not supported "
                                 "(weights only; dynamic FP8 activations of "
                                 "an FP8 checkpoint and FP4 activations of "
                                 "an NVFP4 one are run in 16 bits)");
      activations = nvfp4 ? "; its FP4 activations (input_global_scale) run "
                            "in 16 bits"
                          : kDynamicActivations;
    }
    const json *weights = g.find("weights");
    if (!weights || !weights->is_object())
      return makeError(g.path, ": missing object \"weights\"");
    QTENSOR_ASSIGN_OR_RETURN(
        WeightScheme s,
        parseCTWeights(Fields{*weights, g.path + ".weights"}, groupFormat));
    QuantizationConfig::Group out;
    out.scheme = s;
    QTENSOR_TRY(g.strings("targets", out.targets));
    if (out.targets.empty())
      return makeError(g.path, ".targets: expected at least one target");
    if (c.text.empty())
      c.text = "compressed-tensors " + groupFormat + " " +
               std::to_string(s.bits) + "-bit" +
               (s.blockRows > 0 ? blockText(s) : groupText(s.groupSize)) +
               (s.symmetric ? " sym" : " asym") +
               (s.storage == Storage::Float8E4M3 && s.groupSize < 0
                    ? " (the one scale stored per output channel)"
                : s.blockRows > 0 ? " (each block's scale stored per row)"
                : s.storage == Storage::NVFP4Packed
                    ? " (each group's scale e4m3 / global stored as f32)"
                    : "") +
               activations;
    c.groups.push_back(std::move(out));
  }
  if (c.groups.size() > 1)
    c.text += " (+" + std::to_string(c.groups.size() - 1) + " more groups)";
  return c;
}

/// transformers' fine-grained FP8 (quant_method "fp8", DeepSeek-V3's
/// checkpoints): E4M3 weights under one weight_scale_inv per 2-D block.
Expected<QuantizationConfig> parseFineGrainedFP8(const Fields &f) {
  QuantizationConfig c;
  c.method = Method::FineGrainedFP8;
  WeightScheme s;
  s.method = Method::FineGrainedFP8;
  s.storage = Storage::Float8E4M3;
  s.bits = 8;
  s.symmetric = true;
  std::string format, activations;
  QTENSOR_TRY(f.string("fmt", std::string("e4m3"), format));
  if (format != "e4m3")
    return makeError(f.path, ".fmt: \"", format,
                     "\" weights are not read (e4m3 is)");
  QTENSOR_TRY(
      f.string("activation_scheme", std::string("dynamic"), activations));
  if (activations != "dynamic")
    return makeError(f.path, ".activation_scheme: \"", activations,
                     "\" activations carry calibrated scales, which are not "
                     "read (dynamic is: run in 16 bits)");
  // transformers' FineGrainedFP8Config defaults the block to 128 x 128;
  // an explicit null (per-tensor scales) is another format.
  if (auto it = f.object.find("weight_block_size");
      it != f.object.end() && it->is_null())
    return makeError(f.path, ".weight_block_size: null (one scale per "
                             "tensor) is not read; expected [rows, columns]");
  if (f.find("weight_block_size")) {
    QTENSOR_TRY(blockShape(f, "weight_block_size", s));
  } else {
    s.blockRows = 128;
    s.groupSize = 128;
  }
  QTENSOR_TRY(f.strings("modules_to_not_convert", c.ignore));
  c.text = "fp8 e4m3" + blockText(s) + " (each block's scale stored per row)" +
           kDynamicActivations;
  c.groups.push_back({{"Linear"}, s});
  return c;
}

/// compressed-tensors' matching: "re:" patterns match from the start of
/// the name (Python's re.match), other targets the whole name or the
/// module type (every module asked about here is a Linear).
Expected<bool> matches(const std::string &target, const std::string &module) {
  if (target == "Linear")
    return true;
  if (target.rfind("re:", 0) == 0) {
    try {
      std::regex re(target.substr(3));
      return std::regex_search(module, re,
                               std::regex_constants::match_continuous);
    } catch (const std::regex_error &e) {
      return makeError("target \"", target, "\" is not a regular expression (",
                       e.what(), ")");
    }
  }
  return target == module;
}

} // namespace

Expected<std::optional<WeightScheme>>
QuantizationConfig::schemeFor(const std::string &module) const {
  for (const std::string &pattern : ignore) {
    QTENSOR_ASSIGN_OR_RETURN(bool hit, matches(pattern, module));
    if (hit)
      return std::optional<WeightScheme>();
  }
  std::optional<WeightScheme> found;
  for (const Group &g : groups)
    for (const std::string &target : g.targets) {
      QTENSOR_ASSIGN_OR_RETURN(bool hit, matches(target, module));
      if (!hit)
        continue;
      if (found)
        return makeError("module ", module,
                         " is targeted by two quantization groups");
      found = g.scheme;
      break;
    }
  return found;
}

Expected<QuantizationConfig>
hfquant::parseQuantizationConfig(const json &config, const std::string &file) {
  Fields f{config, file + ": quantization_config"};
  if (!config.is_object())
    return makeError(f.path, ": not an object");
  std::string method;
  QTENSOR_TRY(f.string("quant_method", std::nullopt, method));
  if (method == "gptq")
    return parseGPTQ(f);
  if (method == "awq")
    return parseAWQ(f);
  if (method == "compressed-tensors")
    return parseCompressedTensors(f);
  if (method == "fp8")
    return parseFineGrainedFP8(f);
  return makeError(f.path, ".quant_method: \"", method,
                   "\" is not read (gptq, awq, compressed-tensors, fp8)");
}

std::string hfquant::storedTypeName(const WeightScheme &s) {
  if (s.method == Method::FineGrainedFP8)
    return "FP8_E4M3";
  const char *method = s.method == Method::GPTQ  ? "GPTQ"
                       : s.method == Method::AWQ ? "AWQ"
                                                 : "CT";
  if (s.storage == Storage::Float8E4M3)
    return std::string(method) + "_FP8_E4M3";
  if (s.storage == Storage::NVFP4Packed)
    return std::string(method) + "_NVFP4";
  return std::string(method) + "_INT" + std::to_string(s.bits);
}
