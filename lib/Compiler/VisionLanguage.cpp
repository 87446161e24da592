//===- VisionLanguage.cpp - The language model of a Gemma 3 checkpoint ----===//
//
// Gemma 3's 4B, 12B and 27B Hugging Face checkpoints are
// Gemma3ForConditionalGeneration: a vision tower and a projector beside
// the language model, whose config nests in text_config and whose tensors
// carry a prefix (language_model.model.*, or model.language_model.* as
// transformers 4.52 on saves them). The text model is Gemma3ForCausalLM's
// own, so the reader takes it: the config is text_config with
// transformers' Gemma3TextConfig defaults for the keys it leaves out, the
// tensors lose their prefix, and the vision tensors are left out, counted
// in the report. llama.cpp's converter does the same (its mmproj file
// holds the vision part).
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "CheckpointDetail.h"

namespace qtensor::compiler {

namespace {

bool startsWith(const std::string &s, std::string_view p) {
  return s.compare(0, p.size(), p) == 0;
}

} // namespace

nlohmann::json detail::gemma3TextDefaults(const nlohmann::json &text) {
  // transformers' Gemma3TextConfig defaults, which a text_config relies
  // on for every key it does not spell. The shape defaults are no Gemma 3
  // model's (Gemma 2 2B's); the real configs spell those that differ.
  nlohmann::json out = {{"vocab_size", 262208},
                        {"hidden_size", 2304},
                        {"intermediate_size", 9216},
                        {"num_hidden_layers", 26},
                        {"num_attention_heads", 8},
                        {"num_key_value_heads", 4},
                        {"head_dim", 256},
                        {"hidden_activation", "gelu_pytorch_tanh"},
                        {"max_position_embeddings", 131072},
                        {"rms_norm_eps", 1e-6},
                        {"rope_theta", 1000000.0},
                        {"query_pre_attn_scalar", 256},
                        {"sliding_window", 4096},
                        {"final_logit_softcapping", nullptr},
                        {"attn_logit_softcapping", nullptr},
                        {"rope_local_base_freq", 10000.0},
                        {"tie_word_embeddings", true}};
  for (auto it = text.begin(); it != text.end(); ++it)
    out[it.key()] = it.value();
  return out;
}

Status Checkpoint::takeLanguageModel(const std::string &path,
                                     std::vector<SourceTensor> &all) {
  static constexpr std::string_view kText[] = {"language_model.model.",
                                               "model.language_model."};
  static constexpr std::string_view kVision[] = {
      "vision_tower.", "multi_modal_projector.", "model.vision_tower.",
      "model.multi_modal_projector."};
  std::vector<SourceTensor> out;
  size_t text = 0;
  for (SourceTensor &t : all) {
    bool vision = false;
    for (std::string_view p : kVision)
      vision = vision || startsWith(t.name, p);
    if (vision) {
      leftOutTensors.push_back(t.name);
      continue;
    }
    for (std::string_view p : kText)
      if (startsWith(t.name, p)) {
        t.name = "model." + t.name.substr(p.size());
        ++text;
      }
    if (t.name == "language_model.lm_head.weight")
      t.name = "lm_head.weight";
    out.push_back(std::move(t));
  }
  if (!text)
    return makeError(path, ": a Gemma 3 vision-language checkpoint, but no "
                           "tensor is under language_model.model. or "
                           "model.language_model.");
  all = std::move(out);
  return Status::ok();
}

} // namespace qtensor::compiler
