//===- FusedSplit.cpp - Fused GGUF projections as their row ranges --------===//
//
// llama.cpp's phi3 stores q, k and v as one attn_qkv and the MLP's gate and
// up as one ffn_up. A ggml tensor is row-major with whole blocks in each
// row, so a range of its rows is a range of its bytes: each fused tensor is
// replaced by tensor records of its row ranges under the unfused names
// (blk.L.attn_q/attn_k/attn_v, ffn_gate/ffn_up), views of the same stored
// bytes. Everything after the reader (quantization, kept codes, the
// decoder program) sees ordinary tensors; the codes stay the file's.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "CheckpointDetail.h"

#include "qtensor/Formats/GGMLTypes.h"
#include "qtensor/Models/Architecture.h"
#include "qtensor/Models/TensorNames.h"

#include <map>

namespace qtensor::compiler {

Status Checkpoint::splitFusedGGUF(const std::string &path,
                                  std::vector<SourceTensor> &all) {
  const models::Architecture *family =
      models::findArchitecture(cfg.architecture);
  if (!family || !family->ggufFusedProjections)
    return Status::ok();
  using models::BlockLinear;
  struct Part {
    BlockLinear linear;
    int64_t rows;
  };
  // Each fused tensor's parts, in row order.
  const std::map<std::string, std::vector<Part>> fused = {
      {"attn_qkv",
       {{BlockLinear::Q, cfg.qWidth()},
        {BlockLinear::K, cfg.kvWidth()},
        {BlockLinear::V, cfg.kvWidth()}}},
      {"ffn_up",
       {{BlockLinear::Gate, cfg.intermediate},
        {BlockLinear::Up, cfg.intermediate}}}};
  std::vector<SourceTensor> out;
  for (SourceTensor &t : all) {
    std::optional<models::BlockTensor> b =
        models::parseBlockTensor(models::Naming::GGUF, t.name);
    auto parts = b ? fused.find(std::string(b->inLayer)) : fused.end();
    if (parts == fused.end() || !t.gguf) {
      out.push_back(std::move(t));
      continue;
    }
    const GGUFTensorInfo &info = *t.gguf;
    int64_t total = 0;
    for (const Part &p : parts->second)
      total += p.rows;
    if (info.ne.size() != 2 || info.ne[0] != cfg.hidden || info.ne[1] != total)
      return makeError(path, ": fused tensor ", t.name, " has shape ",
                       detail::shapeText(t.shape), ", the config implies [",
                       total, ", ", cfg.hidden, "] (", cfg.architecture,
                       " stores its parts' rows one after another)");
    const GGMLTypeTraits &traits = ggmlTypeTraits(info.type);
    // A valid file's rows are whole blocks (the reader checked the size).
    const uint64_t rowBytes =
        uint64_t(info.ne[0]) / traits.blockSize * traits.typeSize;
    int64_t first = 0;
    for (const Part &p : parts->second) {
      auto split = std::make_unique<SplitGGUFTensor>();
      split->name =
          models::linearWeightName(models::Naming::GGUF, b->layer, p.linear);
      split->info = info;
      split->info.name = split->name;
      split->info.ne = {info.ne[0], p.rows};
      split->info.elementCount = uint64_t(info.ne[0]) * uint64_t(p.rows);
      split->info.byteSize = rowBytes * uint64_t(p.rows);
      split->info.offset = info.offset + rowBytes * uint64_t(first);
      split->info.absoluteOffset =
          info.absoluteOffset + rowBytes * uint64_t(first);
      split->info.data = info.data + rowBytes * uint64_t(first);
      SourceTensor s;
      s.name = split->name;
      s.gguf = &split->info;
      s.shape = {p.rows, info.ne[0]};
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
