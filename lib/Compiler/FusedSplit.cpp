//===- FusedSplit.cpp - Fused GGUF projections as their row ranges --------===//
//
// phi3 stores q, k and v as one tensor (GGUF attn_qkv, Hugging Face
// self_attn.qkv_proj) and the MLP's gate and up as one (ffn_up,
// mlp.gate_up_proj). Both formats store a tensor row-major (a ggml row is
// whole blocks), so a range of its rows is a range of its bytes: each fused
// tensor is replaced by tensor records of its row ranges under the unfused
// names, views of the same stored bytes. Everything after the reader
// (quantization, kept codes, the decoder program) sees ordinary tensors;
// the codes stay the file's.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "CheckpointDetail.h"

#include "qtensor/Models/Architecture.h"
#include "qtensor/Models/TensorNames.h"

#include <map>

namespace qtensor::compiler {

Status Checkpoint::splitFusedProjections(const std::string &path,
                                         std::vector<SourceTensor> &all) {
  const models::Architecture *family =
      models::findArchitecture(cfg.architecture);
  if (!family || !family->fusedProjections)
    return Status::ok();
  using models::BlockLinear;
  struct Part {
    BlockLinear linear;
    int64_t rows;
  };
  const models::Naming naming = this->naming();
  const bool gguf = naming == models::Naming::GGUF;
  // Each fused tensor's parts, in row order.
  const std::vector<Part> qkv = {{BlockLinear::Q, cfg.qWidth()},
                                 {BlockLinear::K, cfg.kvWidth()},
                                 {BlockLinear::V, cfg.kvWidth()}};
  const std::vector<Part> gateUp = {{BlockLinear::Gate, cfg.intermediate},
                                    {BlockLinear::Up, cfg.intermediate}};
  const std::map<std::string, const std::vector<Part> *> fused = {
      {gguf ? "attn_qkv" : "self_attn.qkv_proj", &qkv},
      {gguf ? "ffn_up" : "mlp.gate_up_proj", &gateUp}};
  std::vector<SourceTensor> out;
  for (SourceTensor &t : all) {
    std::optional<models::BlockTensor> b =
        models::parseBlockTensor(naming, t.name);
    auto parts = b ? fused.find(std::string(b->inLayer)) : fused.end();
    if (parts == fused.end() || (!t.gguf && !t.view)) {
      out.push_back(std::move(t));
      continue;
    }
    int64_t total = 0;
    for (const Part &p : *parts->second)
      total += p.rows;
    if (t.shape != std::vector<int64_t>{total, cfg.hidden})
      return makeError(path, ": fused tensor ", t.name, " has shape ",
                       detail::shapeText(t.shape), ", the config implies [",
                       total, ", ", cfg.hidden, "] (", cfg.architecture,
                       " stores its parts' rows one after another)");
    // Both formats store rows whole and in order: a ggml row is whole
    // blocks (the reader checked the size), a safetensors row K values.
    const uint64_t bytes = t.gguf ? t.gguf->byteSize : t.view->byteSize();
    const uint64_t rowBytes = bytes / uint64_t(total);
    int64_t first = 0;
    for (const Part &p : *parts->second) {
      auto split = std::make_unique<SplitTensor>();
      split->name = models::linearWeightName(naming, b->layer, p.linear);
      const uint64_t skip = rowBytes * uint64_t(first);
      SourceTensor s;
      if (t.gguf) {
        GGUFTensorInfo &i = split->gguf;
        i = *t.gguf;
        i.name = split->name;
        i.ne = {cfg.hidden, p.rows};
        i.elementCount = uint64_t(cfg.hidden) * uint64_t(p.rows);
        i.byteSize = rowBytes * uint64_t(p.rows);
        i.offset += skip;
        i.absoluteOffset += skip;
        i.data += skip;
        s.gguf = &i;
      } else {
        safetensors::TensorView &v = split->view;
        v = *t.view;
        v.name = split->name;
        v.shape = {p.rows, cfg.hidden};
        v.begin += skip;
        v.end = v.begin + rowBytes * uint64_t(p.rows);
        v.data += skip;
        s.view = &v;
      }
      s.name = split->name;
      s.shape = {p.rows, cfg.hidden};
      s.dtype = t.dtype;
      splitTensors.push_back(std::move(split));
      out.push_back(std::move(s));
      first += p.rows;
    }
  }
  all = std::move(out);
  return Status::ok();
}

} // namespace qtensor::compiler
