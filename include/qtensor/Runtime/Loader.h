//===- Loader.h - Loading an artifact to run it (seed 0x05D) ----*- C++ -*-===//
//
// loadModel runs the load order of seed M8.9 0x05D, each step timed into
// the startup timeline (Timeline.h) and accounted in the memory ledgers
// (MemoryLedger.h):
//
//  1. discover  open the root; find manifest.json
//  2. parse     the bounded manifest (Formats/Manifest.h: versions, paths,
//               references, descriptors, kernel entries, op bindings); the
//               decoder program after its hash is checked
//  3. verify    inventory against the
//               model schema (ModelSchema.h); placement and kernel
//               admission with this build's registry (Plan.h), fallback per
//               policy -- all before any tensor byte is read
//  4. read      read only the files the plan needs (this rank's shards, the
//               kernels of this backend) into private memory, each hashed
//               as it is read and checked against its size and SHA-256
//               (or map them: LoadOptions::access); the needed tensors
//               checked against the manifest
//  5. engine    load kernel code: kernels-host.so from its verified bytes
//               (HostBackend.h), or PTX/cubin modules (CudaDevice.h)
//  6. repack / transfer
//               materialize the layouts the kernels read: in place where the
//               stored bytes already are (and aligned), repacked where the
//               kernel reads another layout, copied to the GPU for CUDA;
//               full-dequant fallback weights reconstructed (counted)
//  7. warmup    one call per kernel instance (optional)
//
// Every failure is an error naming the file, tensor or JSON field; nothing
// partially loaded is returned.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_LOADER_H
#define QTENSOR_RUNTIME_LOADER_H

#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Formats/Artifact.h"
#include "qtensor/Formats/DecoderProgram.h"
#include "qtensor/Formats/VerifiedFiles.h"
#include "qtensor/Runtime/ArtifactCode.h"
#include "qtensor/Runtime/ArtifactMetadata.h"
#include "qtensor/Runtime/ExecutionTrace.h"
#include "qtensor/Runtime/KernelInstance.h"
#include "qtensor/Runtime/MemoryLedger.h"
#include "qtensor/Runtime/ModelSchema.h"
#include "qtensor/Runtime/OpKernel.h"
#include "qtensor/Runtime/Plan.h"
#include "qtensor/Runtime/Timeline.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::runtime {

class ReferenceRows;
class WeightRows;

class CudaDevice;
class HostKernelLibrary;

/// Which backend runs the native kernels.
enum class BackendChoice : uint8_t {
  Host,
  Cuda,
  /// The GPU when the artifact has GPU kernels and a GPU is present (else
  /// the host, with the reason noted); the host otherwise.
  Auto,
};
const char *toString(BackendChoice b);
std::optional<BackendChoice> parseBackendChoice(const std::string &s);

/// How the loader holds an artifact's files (MappedFile.h).
enum class FileAccess : uint8_t {
  /// Read once into private memory, hashed as read: the bytes that run are
  /// the bytes verified, whatever happens to the files afterwards.
  Read,
  /// Mapped and hashed: no copy, pages shared with the page cache. For
  /// artifacts nobody modifies while in use: a file truncated under the
  /// mapping faults (SIGBUS), one rewritten in place changes what runs.
  Map,
};
const char *toString(FileAccess a);
std::optional<FileAccess> parseFileAccess(const std::string &s);

struct LoadOptions;
/// The bytes of the manifest's file `f` under `root`, checked against its
/// size and digests and held as `options.access` says (VerifiedFiles.h).
Expected<MappedFile> holdVerifiedFile(const artifact::ArtifactRoot &root,
                                      const artifact::FileEntry &f,
                                      const LoadOptions &options);
/// How a load holds its files: `options.access`, under `options.files`.
artifact::HoldOptions holdOptions(const LoadOptions &options);

struct LoadOptions {
  int64_t rank = 0;
  BackendChoice backend = BackendChoice::Auto;
  /// Overrides the fallback policy of the ops' bindings.
  std::optional<kernels::FallbackPolicy> fallback;
  /// With BackendChoice::Auto, when the artifact's kernels are for a GPU
  /// and no GPU is usable here: forbid refuses to load, naming the backend
  /// and the reason; warn runs the host twins the artifact carries and adds
  /// a "warning:" note; allow runs them and notes it. Either way
  /// LoadedModel::backendFallback() records it. Asking for the host
  /// (BackendChoice::Host) is the user's choice, not a fallback.
  kernels::FallbackPolicy backendFallback = kernels::FallbackPolicy::Forbid;
  /// Ops to load and run; empty: all of this rank's.
  std::vector<std::string> ops;
  /// Also load the decoder program (program.json, DecoderProgram.h): its
  /// plain tensors, its model kernels and its tokenizer file. An artifact
  /// without one is then an error that says why it has none.
  bool decoder = false;
  bool warmup = true;
  /// Where host kernel code comes from (ArtifactCode.h): a trusted rebuild
  /// of the artifact's records, never the artifact's own object unless
  /// `code.trustArtifactCode`.
  ArtifactCodePolicy code = defaultArtifactCodePolicy();
  std::string cudaLibrary = "libcuda.so.1";
  int cudaDevice = 0;
  artifact::OpenPolicy files;
  FileAccess access = FileAccess::Read;
  safetensors::Limits limits;
};

class LoadedModel {
public:
  ~LoadedModel();
  const artifact::Manifest &manifest() const { return man; }
  const RunPlan &plan() const { return runPlan; }
  const SchemaCheck &schema() const { return schemaCheck; }
  const Timeline &timeline() const { return times; }
  const MemoryLedger &ledger() const { return memory; }
  const ExecutionTrace &trace() const { return calls; }
  /// "host", or "cuda (NVIDIA H200, sm_90)".
  const std::string &backend() const { return backendName; }
  /// Set when the artifact's GPU kernels could not run here and their host
  /// twins run instead (LoadOptions::backendFallback): why.
  const std::optional<std::string> &backendFallback() const { return fellBack; }
  /// Why the backend is what it is, policy warnings, and the like.
  const std::vector<std::string> &notes() const { return noteList; }
  /// Bytes of files mapped vs bytes of the tensors the plan reads
  /// (read amplification, seed 0x06C).
  uint64_t mappedBytes() const { return mapped; }
  uint64_t referencedBytes() const { return referenced; }

  /// y = x W^T (+ b) for op `name` (manifest tensor or trace op name);
  /// x is [T, K] in the op's activation dtype. Safe to call from several
  /// threads at once: host calls run concurrently, GPU calls one at a
  /// time; the trace and the ledgers record every call.
  Expected<HostTensor> run(const std::string &name, const HostTensor &x);

  /// The op's reference weight W_hat [N, K] and bias (empty when none), in
  /// float64, from the stored bytes (Reference.h).
  Expected<std::vector<double>> referenceWeight(const OpPlan &op) const;
  Expected<std::vector<double>> referenceBias(const OpPlan &op) const;
  /// W_hat's rounding magnitudes [N, K] (ReconstructedPart), what the
  /// kernel error bound scales with; empty where they are |W_hat| (no min
  /// zero-point).
  Expected<std::vector<double>> referenceMagnitudes(const OpPlan &op) const;
  /// The same W_hat by rows, for references that never need it whole.
  Expected<std::unique_ptr<WeightRows>> referenceRows(const OpPlan &op) const;
  /// The same for any quantized or mixed_2416 tensor of the manifest (the
  /// embedding table, which is no op).
  Expected<std::unique_ptr<WeightRows>>
  referenceRows(const std::string &tensor) const;
  /// A mixed_2416 tensor's streams read out of its shard and verified
  /// (readMixed2416Streams: sizes, codes, CSR order and bounds).
  Expected<Mixed2416Streams> mixedStreams(const std::string &tensor) const;

  // The decoder program (LoadOptions::decoder).
  const std::optional<artifact::DecoderProgram> &program() const {
    return decoderProgram;
  }
  /// A plain tensor of the program, mapped and checked; null when absent.
  const safetensors::TensorView *plainTensor(const std::string &name) const {
    return view(name, "data");
  }
  /// One stored part ("codes", "scales", "zeros") of a quantized tensor,
  /// mapped and checked; null when absent.
  const safetensors::TensorView *quantizedPart(const std::string &name,
                                               const char *role) const {
    return view(name, role);
  }
  /// The resolved address of a program kernel symbol; null when absent.
  void *modelKernel(const std::string &symbol) const;
  /// The tokenizer file's verified bytes (a metadata-only GGUF); null when
  /// the program has none.
  const MappedFile *tokenizerFile() const {
    return tokenizer ? &*tokenizer : nullptr;
  }
  /// The plan's index of op `name` (manifest tensor or trace op name).
  Expected<size_t> opIndex(const std::string &name) const;
  /// y = x W^T for the op at `index`, into `y`: when y already has the
  /// output dtype and [T, N] bytes, no allocation. `record` adds the call
  /// to trace() (the decode loop counts instead).
  Status runInto(size_t index, const HostTensor &x, HostTensor &y,
                 bool record = true);

private:
  friend class Loader;
  LoadedModel() = default;
  struct OpRuntime {
    const OpPlan *plan = nullptr;
    std::vector<std::pair<const KernelInstance *, std::unique_ptr<OpKernel>>>
        native;
    std::unique_ptr<OpKernel> fallback;
  };
  Expected<HostTensor> call(OpRuntime &op, const HostTensor &x, bool warmup);
  Status callInto(OpRuntime &op, const HostTensor &x, HostTensor &y,
                  bool warmup, bool record);
  /// A stored tensor of `tensor` by role; "scales" and "zeros" of a nested
  /// descriptor are its decoded first level (storedView: the codes).
  const safetensors::TensorView *view(const std::string &tensor,
                                      const char *role) const;
  const safetensors::TensorView *storedView(const std::string &tensor,
                                            const char *role) const;
  /// The op's W_hat, or its rounding magnitudes, from the mapped tensors.
  Expected<std::vector<double>>
  reconstructedWeight(const OpPlan &op, ReconstructedPart part) const;

  std::string dir;
  artifact::Manifest man;
  std::vector<KernelInstance> instances;
  SchemaCheck schemaCheck;
  RunPlan runPlan;
  std::map<std::string, safetensors::SafetensorsFile, std::less<>> shards;
  /// Nested and scale-format tensors' first level, decoded: what view()
  /// returns for their "scales" and "zeros" (QuantizedStorage.h). Decoded
  /// at load where a kernel or the embedding reads it; a nested tensor that
  /// only kernels reading its levels as stored use is checked at load and
  /// decoded here on demand, by the reference paths (guarded: view() is
  /// const and callable from several threads).
  mutable std::map<std::string, std::unique_ptr<artifact::DecodedQParams>,
                   std::less<>>
      decodedQParams;
  mutable std::mutex decodedMutex;
  /// The decoded first level of nested `tensor`, decoded now if it is not
  /// yet; null where the tensor has none or it does not decode.
  const artifact::DecodedQParams *
  decodedFirstLevel(const std::string &tensor) const;
  /// Nested `tensor`'s first level decoded from its stored levels (which
  /// this checks: every code in range, every second-level value finite).
  Expected<std::unique_ptr<artifact::DecodedQParams>>
  decodeNestedLevels(const std::string &tensor,
                     const artifact::QuantizedTensor &q) const;
  std::map<std::string, MappedFile, std::less<>> kernelFiles;
  /// The host libraries of the artifact's kernel files (ArtifactCode.h).
  HostCodeSet hostCode;
  std::unique_ptr<CudaDevice> device;
  std::vector<OpRuntime> ops;
  Timeline times;
  MemoryLedger memory;
  ExecutionTrace calls;
  std::string backendName = "host";
  std::optional<std::string> fellBack;
  std::vector<std::string> noteList;
  uint64_t mapped = 0, referenced = 0;
  std::optional<artifact::DecoderProgram> decoderProgram;
  std::map<std::string, void *, std::less<>> modelKernels;
  std::optional<MappedFile> tokenizer;
  std::mutex bookkeeping; ///< guards `calls` and `memory` during run()
  std::mutex deviceCalls; ///< one GPU call at a time
};

/// Loads the artifact in `dir` (see above).
Expected<std::unique_ptr<LoadedModel>> loadModel(const std::string &dir,
                                                 const LoadOptions &options);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_LOADER_H
