//===- Loader.cpp - Loading an artifact for execution (seed 0x05D) --------===//

#include "qtensor/Runtime/Loader.h"

#include "qtensor/Formats/ModelKernelSpec.h"

#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Runtime/CudaBackend.h"
#include "qtensor/Runtime/CudaDevice.h"
#include "qtensor/Runtime/HostBackend.h"
#include "qtensor/Runtime/Reference.h"
#include "qtensor/Support/CheckedMath.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <set>

using namespace qtensor;
using namespace qtensor::runtime;

const char *qtensor::runtime::toString(BackendChoice b) {
  switch (b) {
  case BackendChoice::Host:
    return "host";
  case BackendChoice::Cuda:
    return "cuda";
  case BackendChoice::Auto:
    return "auto";
  }
  return "?";
}

std::optional<BackendChoice>
qtensor::runtime::parseBackendChoice(const std::string &s) {
  for (BackendChoice b :
       {BackendChoice::Host, BackendChoice::Cuda, BackendChoice::Auto})
    if (s == toString(b))
      return b;
  return std::nullopt;
}

const char *qtensor::runtime::toString(FileAccess a) {
  return a == FileAccess::Read ? "read" : "map";
}

std::optional<FileAccess>
qtensor::runtime::parseFileAccess(const std::string &s) {
  for (FileAccess a : {FileAccess::Read, FileAccess::Map})
    if (s == toString(a))
      return a;
  return std::nullopt;
}

Expected<MappedFile>
qtensor::runtime::holdVerifiedFile(const artifact::ArtifactRoot &root,
                                   const artifact::FileEntry &f,
                                   const LoadOptions &options) {
  return artifact::holdVerifiedFile(root, f, holdOptions(options));
}

artifact::HoldOptions
qtensor::runtime::holdOptions(const LoadOptions &options) {
  artifact::HoldOptions hold;
  hold.as = options.access == FileAccess::Read ? artifact::HoldAs::Copy
                                               : artifact::HoldAs::Mapping;
  hold.policy = options.files;
  return hold;
}

LoadedModel::~LoadedModel() {
  // Kernels reference device memory and library code: drop them first.
  ops.clear();
  device.reset();
  hostCode.clear();
}

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Shard tensors of `entry` by role ("data", "codes", "scales", "zeros").
std::string storedName(const artifact::TensorEntry &entry, const char *role) {
  for (const auto &[r, stored] : entry.storedTensors())
    if (std::strcmp(r, role) == 0)
      return stored.tensor;
  return "";
}

} // namespace

namespace qtensor::runtime {

/// The load order of Loader.h, one method per step.
class Loader {
public:
  Loader(const std::string &dir, const LoadOptions &options)
      : dir(dir), options(options), model(new LoadedModel()), m(*model) {
    m.dir = dir;
  }

  Expected<std::unique_ptr<LoadedModel>> load() {
    QTENSOR_TRY(discoverAndParse());
    QTENSOR_TRY(readMetadata());
    QTENSOR_TRY(chooseBackend());
    QTENSOR_TRY(verifyAndPlan());
    QTENSOR_TRY(readFiles());
    QTENSOR_TRY(loadKernels());
    QTENSOR_TRY(materialize());
    if (options.warmup)
      QTENSOR_TRY(warmup());
    return std::move(model);
  }

private:
  using Clock = std::chrono::steady_clock;

  Status discoverAndParse() {
    auto start = Clock::now();
    auto r = artifact::ArtifactRoot::open(dir);
    if (!r)
      return r.error();
    root.emplace(r.take());
    m.times.record(Stage::Discover, secondsSince(start), dir);

    start = Clock::now();
    auto manifest = artifact::readManifest(*root, options.files);
    if (!manifest)
      return manifest.error();
    if (!*manifest)
      return makeError(root->display(artifact::kManifestFileName),
                       ": missing (not an artifact directory, or its write "
                       "was never published)");
    m.man = std::move(**manifest);
    m.times.record(Stage::Parse, secondsSince(start),
                   "manifest.json: " + std::to_string(m.man.files.size()) +
                       " files, " + std::to_string(m.man.tensors.size()) +
                       " tensors, " + std::to_string(m.man.kernels.size()) +
                       " kernels");
    for (const artifact::FileEntry &f : m.man.files)
      QTENSOR_TRY(m.memory.add(MemoryCategory::Disk, f.path, f.bytes));
    return Status::ok();
  }

  /// The one file with `role`; `required` says whether none is an error.
  Expected<const artifact::FileEntry *> soleFile(artifact::FileRole role,
                                                 bool required) {
    const artifact::FileEntry *found = nullptr;
    for (const artifact::FileEntry &f : m.man.files) {
      if (f.role != role)
        continue;
      if (found)
        return makeError(root->display(artifact::kManifestFileName),
                         ": more than one file with role \"",
                         artifact::toString(role), "\" (", found->path, ", ",
                         f.path, ")");
      found = &f;
    }
    if (!found && required)
      return makeError(root->display(artifact::kManifestFileName),
                       ": no file with role \"", artifact::toString(role),
                       "\"; the runtime needs it");
    return found;
  }

  Expected<MappedFile> holdVerified(const artifact::FileEntry &f) {
    return holdVerifiedFile(*root, f, options);
  }

  /// Reads and hashes a small metadata file (verify), for parsing (parse).
  Expected<MappedFile> verified(const artifact::FileEntry &f) {
    auto start = Clock::now();
    auto file = holdVerified(f);
    if (!file)
      return file.error();
    m.times.record(Stage::Verify, secondsSince(start), f.path + " hashed");
    return file.take();
  }

  /// The records the plan is made from are the manifest's (its kernel
  /// entries and op bindings, read with it); the decoder program is a file
  /// of its own. The dispatch trace, the graph and the report are
  /// diagnostics for people: not read here.
  Status readMetadata() {
    if (options.decoder)
      QTENSOR_TRY(readProgram());

    for (size_t i = 0; i < m.man.kernels.size(); ++i)
      m.instances.push_back(kernelInstanceOf(m.man, i));
    return Status::ok();
  }

  /// program.json, checked against the manifest (DecoderProgram.h).
  Status readProgram() {
    QTENSOR_ASSIGN_OR_RETURN(const artifact::FileEntry *programFile,
                             soleFile(artifact::FileRole::Program, false));
    if (!programFile) {
      return makeError(root->display(artifact::kManifestFileName),
                       ": the artifact has no decoder program (role "
                       "\"program\"), so it cannot run as a model (the "
                       "compile report's program.none says why)");
    }
    QTENSOR_ASSIGN_OR_RETURN(MappedFile file, verified(*programFile));
    auto start = Clock::now();
    std::string name = root->display(programFile->path);
    QTENSOR_ASSIGN_OR_RETURN(
        artifact::DecoderProgram program,
        artifact::parseProgram(
            {reinterpret_cast<const char *>(file.data()), size_t(file.size())},
            name));
    QTENSOR_TRY(artifact::validateProgram(program, m.man, name));
    QTENSOR_TRY(checkProgramKernels(program, m.man, name));
    m.times.record(Stage::Parse, secondsSince(start),
                   programFile->path + ": " +
                       std::to_string(program.config.layers) + " layers");
    m.decoderProgram = std::move(program);
    return Status::ok();
  }

  /// The files the decoder program reads besides the plan's.
  void addProgramFiles() {
    if (!m.decoderProgram)
      return;
    const artifact::DecoderProgram &p = *m.decoderProgram;
    for (const std::string &tensor : p.tensors())
      if (const artifact::TensorEntry *t = m.man.findTensor(tensor))
        m.runPlan.files.insert(t->file);
    m.runPlan.files.insert(p.kernelFile);
    if (p.tokenizerFile)
      m.runPlan.files.insert(*p.tokenizerFile);
  }

  Status chooseBackend() {
    bool gpuKernels =
        std::any_of(m.instances.begin(), m.instances.end(),
                    [](const KernelInstance &k) { return !k.isHost(); });
    bool wantCuda = options.backend == BackendChoice::Cuda ||
                    (options.backend == BackendChoice::Auto && gpuKernels);
    if (!wantCuda) {
      target = {"host", kernels::Backend::Host, 0};
      m.backendName = "host";
      return Status::ok();
    }
    auto start = Clock::now();
    auto device = CudaDevice::open(options.cudaDevice, options.cudaLibrary);
    if (!device) {
      m.times.record(Stage::Discover, secondsSince(start),
                     "no GPU: " + device.message());
      if (options.backend == BackendChoice::Cuda)
        return makeError("--backend cuda: ", device.message());
      noGpu = device.message();
      std::string why = "the artifact's kernels are for the GPU and no GPU "
                        "is usable here (" +
                        noGpu + ")";
      if (options.backendFallback == kernels::FallbackPolicy::Forbid)
        return makeError(why, "; the backend fallback policy is forbid: run "
                              "with --backend host to run the host twins the "
                              "artifact carries, or allow the fallback with "
                              "--backend-fallback warn|allow");
      m.fellBack = why +
                   "; its host twins run on the host backend (backend "
                   "fallback " +
                   std::string(kernels::toString(options.backendFallback)) +
                   ")";
      m.noteList.push_back(
          (options.backendFallback == kernels::FallbackPolicy::Warn
               ? "warning: "
               : "") +
          *m.fellBack);
      target = {"host", kernels::Backend::Host, 0};
      m.backendName = "host";
      return Status::ok();
    }
    m.device = device.take();
    target = m.device->target();
    m.backendName = "cuda (" + m.device->info().name + ", " + target.name + ")";
    m.times.record(Stage::Discover, secondsSince(start), m.backendName);
    return Status::ok();
  }

  Status verifyAndPlan() {
    auto start = Clock::now();
    QTENSOR_ASSIGN_OR_RETURN(m.schemaCheck, checkModelSchema(m.man));
    PlanOptions po;
    po.rank = options.rank;
    po.target = target;
    po.fallback = options.fallback;
    po.cubins = options.code.trustArtifactCode;
    po.ops = options.ops;
    auto plan = planRun(m.man, m.instances, po);
    if (!plan) {
      if (!noGpu.empty()) // the reason is the missing GPU: say so
        return makeError(plan.message(),
                         " (the artifact's GPU kernels cannot "
                         "run here: ",
                         noGpu, ")");
      return plan.error();
    }
    m.runPlan = plan.take();
    addProgramFiles();
    for (const std::string &w : m.runPlan.warnings)
      m.noteList.push_back("warning: " + w);
    m.times.record(Stage::Verify, secondsSince(start),
                   m.schemaCheck.summary + "; " +
                       std::to_string(m.runPlan.ops.size()) +
                       " ops admitted on " + target.name + ", " +
                       std::to_string(m.runPlan.fallbacks()) + " fallbacks");
    return Status::ok();
  }

  Status readFiles() {
    auto start = Clock::now();
    std::vector<const artifact::FileEntry *> entries;
    for (const std::string &path : m.runPlan.files) {
      const artifact::FileEntry *f = m.man.findFile(path);
      if (!f) // planRun only names listed files
        return makeError("the plan reads unlisted file ", path);
      entries.push_back(f);
    }
    // Read (or mapped) concurrently and hashed on every core
    // (VerifiedFiles.h); results in plan order, so the error reported is the
    // same whichever thread finished first.
    std::vector<Expected<MappedFile>> held =
        artifact::holdVerifiedFiles(*root, entries, holdOptions(options));
    for (size_t i = 0; i < entries.size(); ++i) {
      const artifact::FileEntry *f = entries[i];
      Expected<MappedFile> &file = held[i];
      if (!file)
        return file.error();
      QTENSOR_TRY(m.memory.add(MemoryCategory::Mapped, f->path, f->bytes));
      m.mapped += f->bytes;
      if (f->role == artifact::FileRole::Kernel) {
        m.kernelFiles.emplace(f->path, file.take());
        continue;
      }
      if (f->role == artifact::FileRole::Tokenizer) {
        m.tokenizer.emplace(file.take());
        continue;
      }
      auto shard = safetensors::SafetensorsFile::fromMappedFile(file.take(),
                                                                options.limits);
      if (!shard)
        return shard.error();
      QTENSOR_TRY(checkShardInventory(m.man, f->path, *shard));
      m.shards.emplace(f->path, shard.take());
    }
    QTENSOR_TRY(decodeQParams());
    for (const OpPlan &op : m.runPlan.ops) {
      for (const auto &[role, stored] : op.entry->storedTensors())
        if (const safetensors::TensorView *v = m.storedView(op.tensor, role))
          m.referenced += v->byteSize();
      if (op.bias)
        if (const safetensors::TensorView *v = m.view(*op.bias, "data"))
          m.referenced += v->byteSize();
    }
    m.times.record(
        Stage::Read, secondsSince(start),
        std::to_string(m.runPlan.files.size()) + " files " +
            (options.access == FileAccess::Read ? "read" : "mapped") +
            " and hashed (" + formatBytes(m.mapped) + "), " +
            formatBytes(m.referenced) + " referenced by the plan");
    return Status::ok();
  }

  /// Whether every kernel of nested `tensor` reads its levels as stored
  /// (KernelEntry::nested) and nothing else reads its first level at run
  /// time (no fallback, not the program's embedding table).
  bool onlyNestedKernelsRead(const std::string &tensor) const {
    if (m.decoderProgram && m.decoderProgram->embed == tensor)
      return false;
    bool read = false;
    for (const OpPlan &op : m.runPlan.ops) {
      if (op.tensor != tensor)
        continue;
      for (const PhasePlan &p : op.phases) {
        if (p.fallback)
          return false;
        for (const KernelInstance *k : p.instances)
          if (!k->nested)
            return false;
        read = true;
      }
    }
    return read;
  }

  /// The first level of every nested or scale-format tensor whose shard
  /// this load holds, decoded once (kernels and reference decoders read
  /// f32 scales and mins; the artifact keeps the two levels, NestedQParams,
  /// or the one-byte codes, ScaleFormat), except where only kernels that
  /// read the levels as stored use it: then it is decoded to check every
  /// code and second-level value, and dropped (view() decodes it again
  /// for a reference path that asks).
  Status decodeQParams() {
    uint64_t bytes = 0;
    for (const artifact::TensorEntry &t : m.man.tensors) {
      // A mixed tensor's streams are verified before any kernel may index
      // them (CSR bounds, map size, code ranges); the kernels' row table
      // is derived from the map once.
      if (t.mixed2416() && m.shards.count(t.file)) {
        QTENSOR_ASSIGN_OR_RETURN(Mixed2416Streams streams,
                                 m.mixedStreams(t.name));
        auto rows =
            mixed2416RowW4Groups(t.mixed2416()->logical, streams.precisionMap);
        if (!rows)
          return makeError(t.name, ": ", rows.message());
        mixedRowW4.emplace(t.name, rows.take());
        continue;
      }
      const artifact::QuantizedTensor *q = t.quantized();
      if (!q || !m.shards.count(t.file))
        continue;
      if (q->logical.descriptor.scaleFormat != ScaleFormat::Plain) {
        const safetensors::TensorView *codes = m.storedView(t.name, "scales");
        if (!codes)
          return makeError(t.name, ": its scale codes are not in its shard");
        QTENSOR_ASSIGN_OR_RETURN(
            std::unique_ptr<artifact::DecodedQParams> decoded,
            artifact::decodeStoredScaleCodes(t.name, q->logical, *codes));
        bytes += decoded->scales.size() * sizeof(float);
        m.decodedQParams.emplace(t.name, std::move(decoded));
        continue;
      }
      if (!q->logical.descriptor.nested)
        continue;
      QTENSOR_ASSIGN_OR_RETURN(std::unique_ptr<artifact::DecodedQParams> first,
                               m.decodeNestedLevels(t.name, *q));
      if (onlyNestedKernelsRead(t.name))
        continue;
      bytes += (first->scales.size() + first->mins.size()) * sizeof(float);
      m.decodedQParams.emplace(t.name, std::move(first));
    }
    if (bytes)
      QTENSOR_TRY(m.memory.add(MemoryCategory::QParams,
                               "nested and float-coded qparams, decoded",
                               bytes));
    return Status::ok();
  }

  Status loadKernels() {
    auto start = Clock::now();
    std::set<const KernelInstance *> used;
    for (const OpPlan &op : m.runPlan.ops)
      for (const PhasePlan &p : op.phases)
        used.insert(p.instances.begin(), p.instances.end());
    size_t symbols = 0;
    for (const KernelInstance *k : used) {
      const MappedFile &file = m.kernelFiles.at(k->codeFile());
      std::vector<void *> fns;
      if (k->isHost()) {
        QTENSOR_TRY(checkHostCpu(k->cpu, k->where()));
        QTENSOR_ASSIGN_OR_RETURN(std::shared_ptr<HostKernelLibrary> lib,
                                 hostLibrary(k->codeFile(), file));
        for (const EntryPoint &e : k->entries) {
          QTENSOR_ASSIGN_OR_RETURN(void *fn, lib->resolve(e.symbol));
          fns.push_back(fn);
        }
        // A W8A8 record's quantizer entries follow its GEMV's.
        if (k->activationQuant)
          for (const EntryPoint &e : k->activationQuant->entries) {
            QTENSOR_ASSIGN_OR_RETURN(void *fn, lib->resolve(e.symbol));
            fns.push_back(fn);
          }
      } else {
        auto &module = modules[k->codeFile()];
        if (!module && options.code.trustArtifactCode) {
          QTENSOR_ASSIGN_OR_RETURN(
              module, m.device->loadModule(file.data(), size_t(file.size()),
                                           k->format == KernelFormat::Ptx,
                                           root->display(k->codeFile())));
        } else if (!module) {
          // This installation's PTX for the record, JIT-compiled by the
          // driver; the artifact's own file is not loaded (ArtifactCode.h).
          QTENSOR_ASSIGN_OR_RETURN(std::string ptx,
                                   gpuCode(options.code, m.man, k->index,
                                           root->display(k->codeFile())));
          QTENSOR_ASSIGN_OR_RETURN(
              module,
              m.device->loadModule(
                  reinterpret_cast<const uint8_t *>(ptx.data()), ptx.size(),
                  true, root->display(k->codeFile()) + " (rebuilt)"));
        }
        for (const EntryPoint &e : k->entries) {
          QTENSOR_ASSIGN_OR_RETURN(
              CudaDevice::Function fn,
              m.device->function(module, e.symbol, k->codeFile()));
          fns.push_back(fn);
        }
      }
      symbols += fns.size();
      functions[k] = std::move(fns);
    }
    if (m.decoderProgram) {
      QTENSOR_ASSIGN_OR_RETURN(size_t resolved, resolveProgramKernels());
      symbols += resolved;
    }
    m.times.record(Stage::Engine, secondsSince(start),
                   std::to_string(used.size()) + " kernel instances, " +
                       std::to_string(symbols) + " entry points resolved");
    return Status::ok();
  }

  /// The library artifact file `path` (verified bytes `file`) runs from:
  /// one trusted rebuild of every host kernel the artifact records, or,
  /// when the artifact is trusted, the file itself (ArtifactCode.h).
  Expected<std::shared_ptr<HostKernelLibrary>>
  hostLibrary(const std::string &path, const MappedFile &file) {
    QTENSOR_ASSIGN_OR_RETURN(
        HostCodeSet::Lookup found,
        m.hostCode.forFile(options.code, m.man,
                           m.decoderProgram ? &*m.decoderProgram : nullptr,
                           path, root->display(path), file.data(),
                           size_t(file.size())));
    if (found.how) {
      m.noteList.push_back("host kernels: " + *found.how);
      // The copy dlopen maps is host memory this process holds.
      QTENSOR_TRY(m.memory.add(MemoryCategory::ResidentHost,
                               options.code.trustArtifactCode
                                   ? "kernel code " + path
                                   : "kernel code (trusted rebuild)",
                               found.bytes));
    }
    return found.library;
  }

  /// The program's model kernels, from its host kernel library.
  Expected<size_t> resolveProgramKernels() {
    const artifact::DecoderProgram &p = *m.decoderProgram;
    const std::string &path = p.kernelFile;
    QTENSOR_TRY(checkHostCpu(p.hostCpu, root->display(path)));
    QTENSOR_ASSIGN_OR_RETURN(std::shared_ptr<HostKernelLibrary> lib,
                             hostLibrary(path, m.kernelFiles.at(path)));
    std::vector<std::string> symbols = p.modelKernelSymbols();
    for (const artifact::ProgramLinear *l : p.linears())
      if (l->kernel)
        symbols.push_back(*l->kernel);
    for (const std::string &symbol : symbols) {
      if (m.modelKernels.count(symbol))
        continue;
      QTENSOR_ASSIGN_OR_RETURN(void *fn, lib->resolve(symbol));
      m.modelKernels.emplace(symbol, fn);
    }
    return m.modelKernels.size();
  }

  /// Host memory the runtime holds (released after upload for CUDA).
  Status holdHost(const std::string &item, uint64_t bytes) {
    stagedHost.push_back(item);
    return m.memory.add(MemoryCategory::ResidentHost, item, bytes);
  }

  /// Host operands of `op` for kernel `k` (shared by instances that read
  /// the same layout and bias dtype).
  Expected<std::shared_ptr<const WeightOperands>>
  hostOperands(const OpPlan &op, const KernelInstance &k) {
    std::string key =
        op.tensor + "|" + k.layout + "|" +
        (k.arg(ArgRole::B) ? toString(k.arg(ArgRole::B)->type) : "-") +
        (k.nested ? "|nested" : "");
    if (auto it = hostCache.find(key); it != hostCache.end())
      return std::shared_ptr<const WeightOperands>(it->second);
    if (k.mixed)
      return mixedHostOperands(op, k, key);
    // A kernel with nested scales reads the levels as stored; view() would
    // decode the first level for it.
    OpTensorViews views;
    views.codes = m.view(op.tensor, "codes");
    if (k.nested) {
      views.scaleCodes = m.storedView(op.tensor, "scales");
      views.minCodes = m.storedView(op.tensor, "zeros");
      views.superScales = m.storedView(op.tensor, "super_scales");
      views.superMins = m.storedView(op.tensor, "super_zeros");
    } else {
      views.scales = m.view(op.tensor, "scales");
      views.zeros = m.view(op.tensor, "zeros");
    }
    QTENSOR_ASSIGN_OR_RETURN(std::vector<double> bias, m.referenceBias(op));
    auto start = Clock::now();
    QTENSOR_ASSIGN_OR_RETURN(std::shared_ptr<WeightOperands> ops,
                             makeHostOperands(k, *op.entry, views, bias));
    if (ops->repacked)
      m.times.record(Stage::Repack, secondsSince(start),
                     op.tensor + " " + op.signature.layout.family + " -> " +
                         k.layout);
    for (const auto &[item, bytes] : ops->copies)
      QTENSOR_TRY(holdHost(item, bytes));
    // Where the host kernels read them (in place or the copies above).
    if (!m.device) {
      QTENSOR_TRY(m.memory.add(MemoryCategory::DeviceCodes,
                               op.tensor + ".codes (" + k.layout + ")",
                               ops->wBytes));
      QTENSOR_TRY(
          m.memory.add(MemoryCategory::QParams, key, ops->qparamBytes()));
    }
    hostCache[key] = ops;
    return std::shared_ptr<const WeightOperands>(ops);
  }

  /// A mixed_2416 kernel's host operands: the stored streams and the row
  /// table decodeQParams derived.
  Expected<std::shared_ptr<const WeightOperands>>
  mixedHostOperands(const OpPlan &op, const KernelInstance &k,
                    const std::string &key) {
    artifact::Mixed2416Views views;
    for (const auto &[role, stored] : op.entry->storedTensors())
      views[role] = m.storedView(op.tensor, role);
    auto rows = mixedRowW4.find(op.tensor);
    if (rows == mixedRowW4.end())
      return makeError("op \"", op.tensor, "\": its streams were not read");
    QTENSOR_ASSIGN_OR_RETURN(std::vector<double> bias, m.referenceBias(op));
    QTENSOR_ASSIGN_OR_RETURN(
        std::shared_ptr<WeightOperands> ops,
        makeMixed2416HostOperands(k, *op.entry, views, rows->second, bias));
    for (const auto &[item, bytes] : ops->copies)
      QTENSOR_TRY(holdHost(item, bytes));
    // Where the host kernel reads them (a device counts its own copies).
    if (!m.device) {
      QTENSOR_TRY(m.memory.add(
          MemoryCategory::DeviceCodes,
          op.tensor + " w2 and w4 codes (" + k.layout + ")", ops->wBytes));
      QTENSOR_TRY(
          m.memory.add(MemoryCategory::QParams, key, ops->qparamBytes()));
    }
    hostCache[key] = ops;
    return std::shared_ptr<const WeightOperands>(ops);
  }

  /// Device copies of `op`'s operands for kernel `k`.
  Expected<DeviceOperands> deviceOperands(const OpPlan &op,
                                          const KernelInstance &k) {
    std::string key =
        op.tensor + "|" + k.layout + "|" +
        (k.arg(ArgRole::B) ? toString(k.arg(ArgRole::B)->type) : "-") +
        (k.nested ? "|nested" : "");
    if (auto it = deviceCache.find(key); it != deviceCache.end())
      return it->second;
    // The host view first (repacks happen there), then one copy each.
    QTENSOR_ASSIGN_OR_RETURN(std::shared_ptr<const WeightOperands> host,
                             hostOperands(op, k));
    auto start = Clock::now();
    DeviceOperands d;
    uint64_t moved = 0;
    auto upload = [&](const void *src, uint64_t bytes, const char *what,
                      CudaDevice::DevicePtr &out) -> Status {
      QTENSOR_ASSIGN_OR_RETURN(out,
                               m.device->allocate(bytes, op.tensor + what));
      moved += bytes;
      return m.device->copyToDevice(out, src, bytes, op.tensor + what);
    };
    if (k.mixed) {
      // Each stream its own buffer (an empty one still has an address).
      for (const auto &[role, stream] : host->streams) {
        DeviceOperands::Stream &out = d.streams[role];
        out.elements = stream.elements;
        const std::string what = std::string(".") + toString(role);
        QTENSOR_ASSIGN_OR_RETURN(
            out.ptr, m.device->allocate(std::max<uint64_t>(stream.bytes, 16),
                                        op.tensor + what));
        moved += stream.bytes;
        if (stream.bytes)
          QTENSOR_TRY(m.device->copyToDevice(out.ptr, stream.data, stream.bytes,
                                             op.tensor + what));
      }
    } else {
      QTENSOR_TRY(upload(host->w, host->wBytes, ".codes", d.w));
      QTENSOR_TRY(upload(host->s, host->sBytes, ".scales", d.s));
      if (host->s2)
        QTENSOR_TRY(upload(host->s2, host->s2Bytes, ".super_scales", d.s2));
      if (host->z)
        QTENSOR_TRY(upload(host->z, host->zBytes, ".zeros", d.z));
      if (host->z2)
        QTENSOR_TRY(upload(host->z2, host->z2Bytes, ".super_zeros", d.z2));
    }
    if (host->b)
      QTENSOR_TRY(upload(host->b, host->bBytes, ".bias", d.b));
    QTENSOR_TRY(m.memory.add(MemoryCategory::DeviceCodes,
                             op.tensor +
                                 (k.mixed ? " w2 and w4 codes (" : ".codes (") +
                                 k.layout + ")",
                             host->wBytes));
    QTENSOR_TRY(
        m.memory.add(MemoryCategory::QParams, key, moved - host->wBytes));
    m.times.record(Stage::Transfer, secondsSince(start),
                   op.tensor + ": " + formatBytes(moved) + " to " +
                       target.name);
    deviceCache[key] = d;
    return d;
  }

  Status materialize() {
    for (const OpPlan &op : m.runPlan.ops) {
      LoadedModel::OpRuntime rt;
      rt.plan = &op;
      for (const PhasePlan &p : op.phases) {
        if (p.fallback) {
          if (!rt.fallback) {
            QTENSOR_ASSIGN_OR_RETURN(rt.fallback, makeFallback(op));
          }
          continue;
        }
        for (const KernelInstance *k : p.instances) {
          // A chunked phase runs another phase's instance (mixed_2416
          // prefill on the decode GEMV): one kernel serves both.
          if (std::any_of(rt.native.begin(), rt.native.end(),
                          [&](const auto &n) { return n.first == k; }))
            continue;
          std::unique_ptr<OpKernel> kernel;
          if (k->isHost()) {
            QTENSOR_ASSIGN_OR_RETURN(std::shared_ptr<const WeightOperands> w,
                                     hostOperands(op, *k));
            if (k->mixed)
              kernel = makeMixed2416HostKernel(
                  *k, functions.at(k), std::move(w), op.activation, op.output);
            else if (k->activationQuant)
              kernel = makeW8A8HostKernel(*k, functions.at(k), std::move(w),
                                          op.activation, op.output);
            else
              kernel = makeHostNativeKernel(*k, functions.at(k), std::move(w),
                                            op.activation, op.output);
          } else {
            QTENSOR_ASSIGN_OR_RETURN(DeviceOperands d, deviceOperands(op, *k));
            std::vector<CudaDevice::Function> fns(functions.at(k).begin(),
                                                  functions.at(k).end());
            kernel = makeCudaNativeKernel(*m.device, *k, std::move(fns), d,
                                          op.activation, op.output, m.memory);
          }
          if (const auto &perm = op.signature.descriptor.permutation)
            kernel = makePermutedInputKernel(*perm, std::move(kernel));
          rt.native.emplace_back(k, std::move(kernel));
        }
      }
      m.ops.push_back(std::move(rt));
    }
    // What the CUDA kernels read lives on the device; the host copies made
    // on the way there (aligned copies, repacks, converted biases) go.
    if (m.device) {
      hostCache.clear();
      for (const std::string &item : stagedHost)
        QTENSOR_TRY(m.memory.release(MemoryCategory::ResidentHost, item));
    }
    return Status::ok();
  }

  /// Seed 0x08D: the whole weight reconstructed by the reference decoder,
  /// held as f32 (a buffer no native kernel needs: counted as fallback).
  Expected<std::unique_ptr<OpKernel>> makeFallback(const OpPlan &op) {
    auto start = Clock::now();
    QTENSOR_ASSIGN_OR_RETURN(std::vector<double> w, m.referenceWeight(op));
    QTENSOR_ASSIGN_OR_RETURN(std::vector<double> bias, m.referenceBias(op));
    std::vector<float> weight(w.begin(), w.end());
    QTENSOR_TRY(m.memory.add(MemoryCategory::Fallback, op.tensor + " W_hat f32",
                             uint64_t(weight.size()) * sizeof(float)));
    m.times.record(Stage::Repack, secondsSince(start),
                   op.tensor + ": full-dequant fallback weight");
    return makeFullDequantKernel(std::move(weight), op.n(), op.k(),
                                 std::move(bias), op.activation, op.output);
  }

  Status warmup() {
    auto start = Clock::now();
    size_t calls = 0;
    for (LoadedModel::OpRuntime &rt : m.ops) {
      // Every entry point once, at its smallest T; a fallback phase once.
      std::vector<int64_t> tokens;
      for (const auto &[k, kernel] : rt.native)
        for (const EntryPoint &e : k->entries)
          if (e.tokens.min <= *k->tokens.max)
            tokens.push_back(std::max(e.tokens.min, k->tokens.min));
      for (const PhasePlan &p : rt.plan->phases)
        if (p.fallback)
          tokens.push_back(p.phase == kernels::Phase::Decode
                               ? 1
                               : kernels::kMaxDecodeTokens + 1);
      for (int64_t t : tokens) {
        QTENSOR_ASSIGN_OR_RETURN(
            HostTensor x,
            HostTensor::zeros(rt.plan->activation, t, rt.plan->k()));
        auto y = m.call(rt, x, /*warmup=*/true);
        if (!y)
          return makeError("warmup of \"", rt.plan->tensor, "\" (T = ", t,
                           "): ", y.message());
        ++calls;
      }
    }
    m.times.record(Stage::Warmup, secondsSince(start),
                   std::to_string(calls) + " calls");
    return Status::ok();
  }

  std::string dir;
  const LoadOptions &options;
  std::unique_ptr<LoadedModel> model;
  LoadedModel &m;
  std::optional<artifact::ArtifactRoot> root;
  kernels::Target target;
  std::map<std::string, CudaDevice::Module> modules;
  std::map<const KernelInstance *, std::vector<void *>> functions;
  std::map<std::string, std::shared_ptr<WeightOperands>> hostCache;
  std::map<std::string, DeviceOperands> deviceCache;
  /// Each mixed_2416 tensor's W4 groups before each row (its kernels' rw4).
  std::map<std::string, std::vector<int32_t>> mixedRowW4;
  std::vector<std::string> stagedHost;
  std::string noGpu; ///< why `auto` could not use the GPU
};

} // namespace qtensor::runtime

Expected<std::unique_ptr<artifact::DecodedQParams>>
LoadedModel::decodeNestedLevels(const std::string &tensor,
                                const artifact::QuantizedTensor &q) const {
  const safetensors::TensorView *scales = storedView(tensor, "scales");
  const safetensors::TensorView *supers = storedView(tensor, "super_scales");
  if (!scales || !supers)
    return makeError(tensor, ": nested qparams are not in its shard");
  return artifact::decodeStoredNestedQParams(
      tensor, q.logical, *scales, *supers, storedView(tensor, "zeros"),
      storedView(tensor, "super_zeros"));
}

const artifact::DecodedQParams *
LoadedModel::decodedFirstLevel(const std::string &tensor) const {
  std::lock_guard<std::mutex> lock(decodedMutex);
  if (auto d = decodedQParams.find(tensor); d != decodedQParams.end())
    return d->second.get();
  const artifact::TensorEntry *entry = man.findTensor(tensor);
  const artifact::QuantizedTensor *q = entry ? entry->quantized() : nullptr;
  if (!q || !q->logical.descriptor.nested)
    return nullptr;
  // The load decoded (and so checked) these levels once already.
  auto first = decodeNestedLevels(tensor, *q);
  if (!first)
    return nullptr;
  return decodedQParams.emplace(tensor, first.take()).first->second.get();
}

const safetensors::TensorView *LoadedModel::view(const std::string &tensor,
                                                 const char *role) const {
  const bool scales = std::strcmp(role, "scales") == 0;
  if (scales || std::strcmp(role, "zeros") == 0) {
    if (const artifact::DecodedQParams *d = decodedFirstLevel(tensor)) {
      if (scales)
        return &d->scalesView;
      return d->mins.empty() ? nullptr : &d->minsView;
    }
    // A nested tensor's stored codes are never its scales: none, rather.
    const artifact::TensorEntry *entry = man.findTensor(tensor);
    if (entry && entry->quantized() &&
        entry->quantized()->logical.descriptor.nested)
      return nullptr;
  }
  return storedView(tensor, role);
}

const safetensors::TensorView *
LoadedModel::storedView(const std::string &tensor, const char *role) const {
  const artifact::TensorEntry *entry = man.findTensor(tensor);
  if (!entry)
    return nullptr;
  auto shard = shards.find(entry->file);
  if (shard == shards.end())
    return nullptr;
  std::string name = storedName(*entry, role);
  return name.empty() ? nullptr : shard->second.find(name);
}

Expected<std::vector<double>>
LoadedModel::reconstructedWeight(const OpPlan &op,
                                 ReconstructedPart part) const {
  const safetensors::TensorView *codes = view(op.tensor, "codes");
  const safetensors::TensorView *scales = view(op.tensor, "scales");
  if (!codes || !scales)
    return makeError("op \"", op.tensor, "\": codes or scales not mapped");
  return reconstructWeight(*op.entry, *codes, *scales, view(op.tensor, "zeros"),
                           part);
}

Expected<Mixed2416Streams>
LoadedModel::mixedStreams(const std::string &tensor) const {
  const artifact::TensorEntry *entry = man.findTensor(tensor);
  if (!entry || !entry->mixed2416())
    return makeError("\"", tensor, "\" is not a mixed_2416 tensor");
  artifact::Mixed2416Views views;
  for (const auto &[role, stored] : entry->storedTensors()) {
    views[role] = storedView(tensor, role);
    if (!views[role])
      return makeError("\"", tensor, "\": its ", role, " stream is not mapped");
  }
  return artifact::readMixed2416Streams(tensor, entry->mixed2416()->logical,
                                        views);
}

namespace {
/// A mixed_2416 op's whole W_hat (or its rounding magnitudes) from its
/// rows.
Expected<std::vector<double>>
mixedWeight(const LoadedModel &m, const OpPlan &op, Mixed2416Part part) {
  QTENSOR_ASSIGN_OR_RETURN(Mixed2416Streams streams, m.mixedStreams(op.tensor));
  QTENSOR_ASSIGN_OR_RETURN(std::unique_ptr<Mixed2416WeightRows> rows,
                           Mixed2416WeightRows::make(op.tensor, *op.mixed,
                                                     std::move(streams), part));
  std::vector<double> w(size_t(rows->rows()) * size_t(rows->cols()));
  QTENSOR_TRY(rows->fill(0, rows->rows(), w.data()));
  return w;
}
} // namespace

Expected<std::vector<double>>
LoadedModel::referenceWeight(const OpPlan &op) const {
  if (op.mixed)
    return mixedWeight(*this, op, Mixed2416Part::Value);
  return reconstructedWeight(op, ReconstructedPart::Value);
}

Expected<std::vector<double>>
LoadedModel::referenceMagnitudes(const OpPlan &op) const {
  // A mixed kernel sums each outlier's difference from the dense value
  // after the dense codes: its rounding grows with both.
  if (op.mixed)
    return mixedWeight(*this, op, Mixed2416Part::RoundingMagnitude);
  const artifact::QuantizedTensor *q =
      op.entry ? op.entry->quantized() : nullptr;
  if (!q || !hasOwnRoundingMagnitudes(q->logical.descriptor))
    return std::vector<double>();
  return reconstructedWeight(op, ReconstructedPart::RoundingMagnitude);
}

Expected<std::unique_ptr<WeightRows>>
LoadedModel::referenceRows(const OpPlan &op) const {
  return referenceRows(op.tensor);
}

Expected<std::unique_ptr<WeightRows>>
LoadedModel::referenceRows(const std::string &tensor) const {
  const artifact::TensorEntry *entry = man.findTensor(tensor);
  if (entry && entry->mixed2416()) {
    QTENSOR_ASSIGN_OR_RETURN(Mixed2416Streams streams, mixedStreams(tensor));
    QTENSOR_ASSIGN_OR_RETURN(
        std::unique_ptr<Mixed2416WeightRows> rows,
        Mixed2416WeightRows::make(tensor, entry->mixed2416()->logical,
                                  std::move(streams)));
    return std::unique_ptr<WeightRows>(std::move(rows));
  }
  if (!entry || !entry->quantized())
    return makeError("\"", tensor, "\" is not a quantized tensor");
  const safetensors::TensorView *codes = view(tensor, "codes");
  const safetensors::TensorView *scales = view(tensor, "scales");
  if (!codes || !scales)
    return makeError("\"", tensor, "\": codes or scales not mapped");
  QTENSOR_ASSIGN_OR_RETURN(
      std::unique_ptr<ReferenceRows> rows,
      ReferenceRows::open(*entry, *codes, *scales, view(tensor, "zeros")));
  return std::unique_ptr<WeightRows>(std::move(rows));
}

Expected<std::vector<double>>
LoadedModel::referenceBias(const OpPlan &op) const {
  if (!op.bias)
    return std::vector<double>();
  const safetensors::TensorView *v = view(*op.bias, "data");
  if (!v)
    return makeError("bias \"", *op.bias, "\" is not mapped");
  return safetensors::toFloat64(*v);
}

Status LoadedModel::callInto(OpRuntime &rt, const HostTensor &x, HostTensor &y,
                             bool warmup, bool record) {
  const OpPlan &op = *rt.plan;
  int64_t t = x.rows;
  const PhasePlan *phase = op.phaseFor(t);
  if (!phase)
    return makeError("op \"", op.tensor,
                     "\": no kernel was planned for T = ", t, " (",
                     kernels::toString(kernels::phaseOfTokens(t)),
                     "); the artifact's phases do not cover it");
  OpKernel *kernel = nullptr;
  if (phase->fallback) {
    kernel = rt.fallback.get();
  } else {
    const KernelInstance *instance = op.instanceFor(t);
    for (auto &[k, impl] : rt.native)
      if (k == instance) {
        kernel = impl.get();
        break;
      }
  }
  if (!kernel)
    return makeError("op \"", op.tensor, "\": no kernel accepts T = ", t);
  auto start = std::chrono::steady_clock::now();
  Status s = kernel->run(x, y);
  double seconds = secondsSince(start);
  if (!s)
    return makeError("op \"", op.tensor, "\": ", s.message());
  if (record) {
    std::lock_guard<std::mutex> lock(bookkeeping);
    calls.add({op.tensor, kernel->name(), kernel->backend(), phase->phase, t,
               seconds, phase->fallback, warmup});
  }
  return Status::ok();
}

Expected<HostTensor> LoadedModel::call(OpRuntime &rt, const HostTensor &x,
                                       bool warmup) {
  const OpPlan &op = *rt.plan;
  uint64_t work =
      uint64_t(x.bytes.size()) +
      uint64_t(x.rows) * uint64_t(op.n()) * HostTensor::elementBytes(op.output);
  std::string item = "call " + op.tensor;
  // Calls may come from several threads at once (host kernels share only
  // read-only operands and the thread pool): the ledger and the trace are
  // the shared state. A GPU's calls stage through one context: one at a
  // time.
  {
    std::lock_guard<std::mutex> lock(bookkeeping);
    QTENSOR_TRY(memory.add(MemoryCategory::Workspace, item, work));
  }
  HostTensor y;
  Status s = Status::ok();
  if (device) {
    std::lock_guard<std::mutex> lock(deviceCalls);
    s = callInto(rt, x, y, warmup, /*record=*/true);
  } else {
    s = callInto(rt, x, y, warmup, /*record=*/true);
  }
  {
    std::lock_guard<std::mutex> lock(bookkeeping);
    QTENSOR_TRY(memory.release(MemoryCategory::Workspace, item, work));
  }
  if (!s)
    return s.error();
  return y;
}

Expected<size_t> LoadedModel::opIndex(const std::string &name) const {
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].plan->tensor == name || ops[i].plan->op == name)
      return i;
  return makeError("no loaded op \"", name, "\"");
}

Status LoadedModel::runInto(size_t index, const HostTensor &x, HostTensor &y,
                            bool record) {
  if (index >= ops.size())
    return makeError("no loaded op #", index);
  return callInto(ops[index], x, y, /*warmup=*/false, record);
}

void *LoadedModel::modelKernel(const std::string &symbol) const {
  auto it = modelKernels.find(symbol);
  return it == modelKernels.end() ? nullptr : it->second;
}

Expected<HostTensor> LoadedModel::run(const std::string &name,
                                      const HostTensor &x) {
  for (OpRuntime &rt : ops)
    if (rt.plan->tensor == name || rt.plan->op == name)
      return call(rt, x, /*warmup=*/false);
  return makeError("no loaded op \"", name, "\"");
}

Expected<std::unique_ptr<LoadedModel>>
qtensor::runtime::loadModel(const std::string &dir,
                            const LoadOptions &options) {
  Loader loader(dir, options);
  return loader.load();
}
