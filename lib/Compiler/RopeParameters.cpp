//===- RopeParameters.cpp - transformers 5's rope_parameters --------------===//
//
// transformers 5 saves a config's RoPE as one `rope_parameters` object
// (rope_type, rope_theta, the scaling's keys, partial_rotary_factor)
// instead of top-level rope_theta and rope_scaling, and gemma3's as one
// such object per layer type (full_attention, sliding_attention). A
// reader that looked for rope_theta alone would run a Llama 3 at base
// 10000 without a word, so the config is spelled back in the keys the
// reader knows before it is read; a value given both ways must agree.
//
//===----------------------------------------------------------------------===//

#include "CheckpointDetail.h"

namespace qtensor::compiler {

namespace {

/// Sets `key` of `cfg` from `value`; an error when `cfg` already holds
/// another value there.
Status setOnce(nlohmann::json &cfg, const std::string &file, const char *key,
               const nlohmann::json &value, const char *from) {
  auto it = cfg.find(key);
  if (it != cfg.end() && !it->is_null() && *it != value)
    return makeError(file, ": ", key, " is ", it->dump(), " but ", from,
                     " says ", value.dump());
  cfg[key] = value;
  return Status::ok();
}

/// One rope_parameters object: its theta, partial rotary factor and (when
/// its type scales) the scaling, as the legacy keys.
Status spellBack(nlohmann::json &cfg, const std::string &file,
                 const nlohmann::json &p, const char *thetaKey,
                 const char *from, bool scalingAllowed) {
  if (!p.is_object())
    return makeError(file, ": ", from, " must be an object");
  if (auto theta = p.find("rope_theta"); theta != p.end())
    QTENSOR_TRY(setOnce(cfg, file, thetaKey, *theta, from));
  if (auto partial = p.find("partial_rotary_factor"); partial != p.end())
    QTENSOR_TRY(setOnce(cfg, file, "partial_rotary_factor", *partial, from));
  nlohmann::json scaling = p;
  scaling.erase("rope_theta");
  scaling.erase("partial_rotary_factor");
  std::string type = "default";
  for (const char *key : {"rope_type", "type"})
    if (auto t = scaling.find(key); t != scaling.end() && t->is_string())
      type = t->get<std::string>();
  if (type == "default")
    return Status::ok();
  if (!scalingAllowed)
    return makeError(file, ": ", from, " declares rope_type \"", type,
                     "\"; the windowed layers' RoPE is never scaled here");
  return setOnce(cfg, file, "rope_scaling", scaling, from);
}

} // namespace

Status detail::spellRopeParameters(nlohmann::json &cfg,
                                   const std::string &file) {
  auto it = cfg.find("rope_parameters");
  if (it == cfg.end() || it->is_null())
    return Status::ok();
  const nlohmann::json p = *it;
  cfg.erase("rope_parameters");
  if (!p.is_object())
    return makeError(file, ": rope_parameters must be an object");
  // gemma3: one object per layer type.
  if (p.contains("full_attention") || p.contains("sliding_attention")) {
    for (auto e = p.begin(); e != p.end(); ++e)
      if (e.key() != "full_attention" && e.key() != "sliding_attention")
        return makeError(file, ": rope_parameters holds \"", e.key(),
                         "\" beside the layer types full_attention and "
                         "sliding_attention");
    if (auto full = p.find("full_attention"); full != p.end())
      QTENSOR_TRY(spellBack(cfg, file, *full, "rope_theta",
                            "rope_parameters.full_attention", true));
    if (auto local = p.find("sliding_attention"); local != p.end())
      QTENSOR_TRY(spellBack(cfg, file, *local, "rope_local_base_freq",
                            "rope_parameters.sliding_attention", false));
    return Status::ok();
  }
  return spellBack(cfg, file, p, "rope_theta", "rope_parameters", true);
}

} // namespace qtensor::compiler
