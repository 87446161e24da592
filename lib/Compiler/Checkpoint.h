//===- Checkpoint.h - Reading a checkpoint for compile ----------*- C++ -*-===//
//
// One view of the inputs `qtc compile` takes: a Hugging Face style directory
// (config.json plus model.safetensors or a sharded index; llama, mistral and
// qwen2 names) or a GGUF file (llama names). It finds the linear weights of
// each decoder block and the output head, checks their shapes against the
// model's config, and decides with a WeightSelection which of them are
// quantized; every other tensor (embeddings, norms, excluded linears) is a
// plain tensor to copy. Nothing is decoded here: views point into the
// mappings, which the Checkpoint owns.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_CHECKPOINT_H
#define QTENSOR_LIB_COMPILER_CHECKPOINT_H

#include "Selection.h"
#include "SourceDigest.h"

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Formats/DecoderProgram.h"
#include "qtensor/Formats/GGUF.h"
#include "qtensor/Formats/HFQuantized.h"
#include "qtensor/Formats/ONNX.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Formats/SafetensorsIndex.h"
#include "qtensor/Models/Architecture.h"
#include "qtensor/Support/Expected.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::compiler {

/// The decoder-block shapes of a llama-family model.
struct ModelConfig {
  std::string architecture; ///< a family of Models/Architecture.h
  std::string name;
  int64_t hidden = 0, intermediate = 0, layers = 0, heads = 0, kvHeads = 0,
          vocab = 0;
  int64_t headDim = 0;   ///< hidden / heads unless the config says otherwise
  bool tiedHead = false; ///< config.json tie_word_embeddings (HF only)
  int64_t qWidth() const { return heads * headDim; }
  int64_t kvWidth() const { return kvHeads * headDim; }
};

/// A linear stored by a quantization method as several tensors (GPTQ, AWQ,
/// compressed-tensors: HFQuantized.h; ONNX MatMulNBits and
/// DequantizeLinear: ONNX.h): the descriptor they spell, and how to move
/// their codes and qparams out into the logical layout.
struct PackedSource {
  std::string module; ///< `model.layers.0.self_attn.q_proj`, an ONNX node
  QuantizedTensorDescriptor descriptor; ///< logical layout
  /// The stored codes and qparams in logical form (never re-quantized).
  std::function<Expected<hfquant::LogicalParts>()> unpack;
  /// Gives the stored tensors' pages back (releaseMappedPages).
  std::function<void()> release;
};

/// Where a tensor's bytes are: a safetensors view, a GGUF tensor, or the
/// tensors of a packed linear.
struct SourceTensor {
  std::string name; ///< as the checkpoint spells it (a packed linear:
                    ///< MODULE.weight, which the checkpoint does not store)
  const safetensors::TensorView *view = nullptr;
  const GGUFTensorInfo *gguf = nullptr;
  const PackedSource *packed = nullptr;
  std::vector<int64_t> shape; ///< C order ([N, K] for a weight)
  std::string dtype; ///< "BF16", "F16", "F32", "Q4_0", "GPTQ_INT4", ...
};

/// One linear of a decoder block, or the output head: y = x W^T (+ b),
/// W: [N, K].
struct SourceLinear {
  int64_t layer = 0;   ///< -1 for the head
  std::string role;    ///< q_proj k_proj v_proj o_proj gate_proj up_proj
                       ///< down_proj, or lm_head
  std::string name;    ///< the artifact's name: the checkpoint's weight name (a
                       ///< quantized tied head: lm_head.weight / output.weight)
  SourceTensor weight; ///< for a tied head, the embedding
  /// The activation (and reconstruction) type when the input declares it
  /// (an MLIR module); none: derived from the checkpoint's dtype.
  std::optional<FloatType> elementType;
  std::optional<SourceTensor> bias; ///< qwen2 q/k/v
  int64_t n() const { return weight.shape[0]; }
  int64_t k() const { return weight.shape[1]; }
};

/// A tensor an MLIR module references by name (`qtensor.weight`), as the
/// module types it.
struct ModuleReference {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype; ///< the IR element type as a safetensors name (F16...)
  /// Read as the weight operand of a contraction (through transposes).
  bool contraction = false;
  /// A weight the module declares quantized (a `!quant.uniform` global or
  /// argument, or a qtensor.assemble of a qtensor.weight): its codes are
  /// in the weights file, in 8-bit storage (`dtype` I8 or U8); the
  /// descriptor and the qparams are the IR's.
  struct Codes {
    QuantizedTensorDescriptor descriptor; ///< element type: the expressed
    std::vector<float> scales;            ///< logical qparam order
    std::vector<int32_t> zeros;           ///< empty when symmetric
  };
  std::optional<Codes> codes;
};

/// What was decided for a tensor that is not quantized (for the report).
struct KeptTensor {
  std::string name;
  TensorKind kind;
  std::string reason;
};

/// True for a path qtc compile reads as an ONNX model (.onnx).
bool isOnnxPath(const std::string &path);

class Checkpoint {
public:
  /// Opens `path` (a directory with config.json, or a .gguf file) and
  /// validates what compile needs; `selection` decides which linears are
  /// quantized. Errors name the file, tensor and field.
  static Expected<Checkpoint> open(const std::string &path,
                                   WeightSelection &selection);
  /// The weights of an MLIR module (`qtc compile MODULE --weights FILE`):
  /// `weights` is a safetensors file, a safetensors index or a GGUF file;
  /// every reference must name one of its tensors with the module's shape.
  /// A contraction weight is a linear to quantize unless `selection` keeps
  /// it; a kept tensor must be stored with the module's dtype. Tensors the
  /// module does not reference are listed by unreferenced() and not
  /// exported. (ModuleCheckpoint.cpp)
  static Expected<Checkpoint>
  openForModule(const std::string &modulePath, const std::string &weights,
                const std::vector<ModuleReference> &references,
                WeightSelection &selection);
  /// An ONNX model (`qtc compile model.onnx`): its quantized linears
  /// (ONNX.h), each named by its weight's initializer, with their codes;
  /// no decoder, and its other initializers listed by unreferenced().
  /// (OnnxCheckpoint.cpp)
  static Expected<Checkpoint> openOnnx(const std::string &path,
                                       WeightSelection &selection);

  /// "safetensors" | "gguf" | "mlir" | "onnx"
  const std::string &format() const { return kind; }
  /// The tensor names of a decoder checkpoint: GGUF's, else Hugging Face's.
  models::Naming naming() const {
    return kind == "gguf" ? models::Naming::GGUF : models::Naming::HuggingFace;
  }
  const ModelConfig &config() const { return cfg; }
  /// Makes the kept tensor `bias` the bias of the linear `linear` (an MLIR
  /// module's linears are known only after fusion): it is then stored with
  /// the linear under `storedName`, not as a plain tensor.
  /// (ModuleCheckpoint.cpp)
  Status attachBias(const std::string &linear, const std::string &bias,
                    const std::string &storedName);

  /// The linears to quantize, in model order (the head last).
  const std::vector<SourceLinear> &linears() const { return lin; }
  /// The linears kept in float (excluded; the head by default), in model
  /// order. Their tensors are among others().
  const std::vector<SourceLinear> &floatLinears() const { return floatLin; }
  /// Every stored tensor that is not quantized (kept as stored).
  const std::vector<SourceTensor> &others() const { return rest; }
  /// Why each of others() is kept (and, for a tied head, what it shares).
  const std::vector<KeptTensor> &kept() const { return keptList; }
  /// The GGUF file the weights come from (its metadata holds the
  /// tokenizer), or null for safetensors.
  const GGUFFile *gguf() const { return ggufFile.get(); }
  /// Tensors of a module's weights file that the module does not use.
  const std::vector<std::string> &unreferenced() const { return unused; }
  /// The quantization_config a Hugging Face checkpoint declares, as its
  /// reader spells it ("gptq 4-bit g128 asym desc_act gptq"); empty if none.
  const std::string &quantization() const { return quantText; }
  /// SHA-256 over the checkpoint's files, in a fixed order (provenance);
  /// hashed on a thread of its own since the checkpoint opened, so this
  /// waits for it (SourceDigest.h).
  Expected<std::string> sha256() const { return digest.get(); }
  /// The input files hashed, for the report.
  const std::vector<std::string> &files() const { return inputs; }
  /// The whole decoder (hyperparameters the runtime needs to run the model)
  /// when the checkpoint declares one it can run; none for an MLIR module,
  /// or with decoderGap() saying why (e.g. a RoPE scaling it lacks).
  const std::optional<artifact::DecoderConfig> &decoder() const { return dec; }
  const std::string &decoderGap() const { return noDecoder; }
  /// Tensors of a vision-language checkpoint that are not its language
  /// model (Gemma 3's vision tower and projector), left out.
  const std::vector<std::string> &leftOut() const { return leftOutTensors; }

  /// The dtype a kept (plain) tensor is stored with in the artifact: a float
  /// safetensors tensor as it is, anything else decoded to F32 (GGUF blocks
  /// are lookups, norms or linears kept in float here). Export writes it,
  /// the graph declares it.
  static safetensors::DType storedPlainDType(const SourceTensor &t);

  /// The tensor's values as floats (F32/F16/BF16 safetensors; any decodable
  /// GGUF type).
  Expected<std::vector<float>> readFloat(const SourceTensor &t) const;
  /// Gives the pages of `t`'s stored bytes back (releaseMappedPages): a
  /// stage that has finished with a tensor calls it, so the checkpoint's
  /// mappings do not stay resident as the model is read. The bytes stay
  /// readable.
  void releaseSource(const SourceTensor &t) const;

private:
  Checkpoint() = default;
  /// Opens a safetensors file or index (`isIndex`), or a GGUF file, keeps
  /// it open and appends its tensors to `all`.
  Status listSafetensors(const std::string &file, bool isIndex,
                         std::vector<SourceTensor> &all);
  Status listGGUF(const std::string &file, std::vector<SourceTensor> &all);
  /// For a family that fuses projections (Architecture::fusedProjections):
  /// each fused tensor of `all` (GGUF or safetensors) is replaced by its
  /// row ranges under the unfused names, views of the same stored rows.
  /// (FusedSplit.cpp)
  Status splitFusedProjections(const std::string &path,
                               std::vector<SourceTensor> &all);
  /// A weight an MLIR module quantizes (ref.codes): a linear whose codes
  /// are `stored` (the weights file's 8-bit tensor) and whose descriptor
  /// and qparams are the module's. (ModuleCheckpoint.cpp)
  Status addModuleQuantized(const std::string &modulePath,
                            const std::string &weights,
                            const ModuleReference &ref,
                            const SourceTensor &stored,
                            WeightSelection &selection);
  /// For a checkpoint with a quantization_config: every linear the config
  /// quantizes becomes one packed SourceTensor MODULE.weight appended to
  /// `all`; its stored tensors are marked in `components` (never plain).
  /// A Gemma 3 vision-language checkpoint's language model: its tensors
  /// under Gemma3ForCausalLM's names, the vision tensors moved to
  /// leftOutTensors (VisionLanguage.cpp).
  Status takeLanguageModel(const std::string &path,
                           std::vector<SourceTensor> &all);
  Status listPacked(const hfquant::QuantizationConfig &config,
                    const std::string &configPath,
                    std::vector<SourceTensor> &all,
                    std::vector<bool> &components);

  std::string kind;
  ModelConfig cfg;
  std::optional<artifact::DecoderConfig> dec;
  std::string noDecoder = "an MLIR module declares no decoder";
  std::vector<SourceLinear> lin, floatLin;
  std::vector<SourceTensor> rest;
  std::vector<KeptTensor> keptList;
  std::vector<std::string> unused, leftOutTensors;
  SourceDigest digest;
  std::string quantText;
  std::vector<std::string> inputs;
  std::shared_ptr<safetensors::SafetensorsFile> single;
  std::shared_ptr<safetensors::SafetensorsIndex> index;
  std::shared_ptr<GGUFFile> ggufFile;
  /// Tensor records of splitFusedProjections' row ranges.
  struct SplitTensor {
    std::string name;
    GGUFTensorInfo gguf;
    safetensors::TensorView view;
  };
  std::vector<std::unique_ptr<SplitTensor>> splitTensors;
  std::vector<std::shared_ptr<PackedSource>> packedSources;
  std::shared_ptr<onnxmodel::Model> onnx;
};

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_CHECKPOINT_H
