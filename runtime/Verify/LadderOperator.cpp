//===- LadderOperator.cpp - L3: operator parity ---------------------------===//
//
// Seed M8.9 0x09D: every quantized linear's compiled kernel, run on
// deterministic activations (Runtime/Activations.h), against a float64
// matmul of the reference reconstruction of exactly what is stored. Two
// errors are kept apart:
//
//   kernel error        |Y_kernel - X W_hat^T|, elementwise, against the
//                       bound of Runtime/Reference.h (kernelErrorBound): f32
//                       accumulation over K terms in any order, gamma(K + 2)
//                       sum|x w|, plus half an ulp of the output dtype. A
//                       kernel beyond it is a bug, whatever the weights.
//   quantization error  W_hat against the float weights, which the artifact
//                       no longer holds: the compiler measured it and
//                       recorded it in report.json; it is reported beside
//                       the kernel error, never mixed into it.
//
// T covers each phase: decode {1, 5, 16}, prefill {17, 64}, plus the
// smallest T of every entry point (the decode GEMV's T buckets), each
// clipped to what the kernel entry serves. An op of at least
// LadderOptions::sampleAboveWeights weights (4 Mi by default) runs only the
// entry points' smallest T unless the ladder is exhaustive, and its float64
// reference covers 256 output rows per call (the first, the last, the rest
// drawn from a recorded seed and the op's name; the kernel still computes
// every row, each checked for non-finite values): every entry point still
// runs on every op, and the detail counts the sampled ops and says how.
// On the host, a kernel runs its spread of T once, on the first unsampled
// op it serves: it is one compiled code for all of them (N and K
// included), so what T exercises in it is the same for each; the ops after
// that run each entry point at its smallest T, every row checked (counted
// in the detail too). A GPU runs every op's spread.
//
// Host artifacts run every host kernel entry of the manifest, for every op
// it lists (every rank), through the runtime's host backend (the verified
// kernels-host.so, the MLIR C interface). A GPU artifact runs on the GPU
// when one is present, each rank loaded through the runtime's CUDA backend;
// without one, the host twins it carries run as a host artifact's kernels
// do and the level's name says so; with neither, L3 is reported as not run
// (ok = false: nothing was tested).
//
// At tp = 1 the artifact must also load through the runtime (loadModel:
// schema, trace, plan), so that a verified artifact is a loadable one.
// An artifact with tp > 1 run on the host is also run composed: every rank loaded
// through the runtime's host backend in one process, each op's outputs
// joined by the host stand-in for the collectives (Runtime/TensorParallel.h:
// all_gather of column slices, all_reduce(sum) of row partials and then the
// bias), at one decode and one prefill T, against the float64 reference of
// the whole weight: kernelErrorBound for gathered outputs,
// allReduceErrorBound (the partials rounded before the reduction) for
// reduced ones.
//
//===----------------------------------------------------------------------===//

#include "LadderLevels.h"

#include "qtensor/Runtime/Activations.h"
#include "qtensor/Runtime/CudaDevice.h"
#include "qtensor/Runtime/HostBackend.h"
#include "qtensor/Runtime/KernelInstance.h"
#include "qtensor/Runtime/Loader.h"
#include "qtensor/Runtime/OpKernel.h"
#include "qtensor/Runtime/Plan.h"
#include "qtensor/Runtime/Reference.h"
#include "qtensor/Runtime/TensorParallel.h"
#include "qtensor/Support/MappedFile.h"

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <set>

namespace qtensor::verify::detail {
namespace {

using namespace qtensor::runtime;

/// Whether an [n, k] op runs sampled (LadderOptions).
bool sampledOp(int64_t n, int64_t k, const LadderOptions &options) {
  return !options.exhaustive && n * k >= options.sampleAboveWeights;
}

/// Output rows a sampled op's calls are checked on: the first and the last
/// (the tails of tiled kernels) and others drawn with kRowSampleSeed and
/// the op's name, kRowSample in all; every row when N is not larger.
constexpr size_t kRowSample = 256;
constexpr uint64_t kRowSampleSeed = 0x5EED0003;
constexpr const char *kRowSampleSeedText = "0x5eed0003";
std::vector<int64_t> sampledRows(int64_t n, const std::string &op) {
  std::vector<int64_t> rows;
  if (n <= int64_t(kRowSample)) {
    for (int64_t r = 0; r < n; ++r)
      rows.push_back(r);
    return rows;
  }
  // FNV-1a of the name: the same rows on every build and platform.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : op)
    h = (h ^ c) * 0x100000001b3ull;
  std::set<int64_t> chosen = {0, n - 1};
  std::mt19937_64 rng(kRowSampleSeed ^ h);
  std::uniform_int_distribution<int64_t> any(1, n - 2);
  while (chosen.size() < kRowSample)
    chosen.insert(any(rng));
  return {chosen.begin(), chosen.end()};
}

/// The T values L3 runs an entry with: each entry point's smallest T, and
/// unless `sampled` also the phase's spread of T.
std::vector<int64_t> tokensFor(const KernelInstance &k, bool sampled) {
  std::set<int64_t> t;
  if (!sampled)
    t = k.phase == kernels::Phase::Decode ? std::set<int64_t>{1, 5, 16}
                                          : std::set<int64_t>{17, 64};
  // A mixed_2416 or W8A8 GEMV also runs prefill, as chunks of its entries'
  // T: one whole chunk and a tail.
  const bool chunked = (k.mixed || k.activationQuant) && !sampled;
  if (chunked)
    t.insert({*k.tokens.max + 1, 2 * *k.tokens.max + 7});
  for (const EntryPoint &e : k.entries)
    t.insert(std::max(e.tokens.min, k.tokens.min));
  std::vector<int64_t> out;
  for (int64_t v : t)
    if (v >= k.tokens.min && (chunked || v <= *k.tokens.max))
      out.push_back(v);
  return out;
}

/// The worst call so far, for the detail line.
struct Worst {
  double ratio = -1, maxAbs = 0;
  std::string where;
  void update(const KernelError &e, const std::string &at) {
    maxAbs = std::max(maxAbs, e.maxAbsError);
    if (e.worstRatio > ratio) {
      ratio = e.worstRatio;
      where = at;
    }
  }
};

std::string format(const char *fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

/// "quantization error recorded at compile time: worst relative weight
/// error R (op)", from report.json's tensors.
std::string quantizationSummary(const artifact::Artifact &a) {
  auto report = readReport(a);
  if (!report)
    return "no compile-time quantization error to compare (" +
           report.message() + ")";
  double worst = -1;
  std::string worstOp;
  if (report->contains("tensors") && (*report)["tensors"].is_array())
    for (const auto &t : (*report)["tensors"])
      if (t.is_object() && t.contains("relative_error") &&
          t["relative_error"].is_number() && t.contains("name") &&
          t["name"].is_string() && t["relative_error"].get<double>() > worst) {
        worst = t["relative_error"].get<double>();
        worstOp = t["name"].get<std::string>();
      }
  if (worst < 0)
    return "the report records no quantization error";
  return "quantization error (recorded at compile time, W_hat vs the float "
         "weights): worst relative " +
         format("%.3g", worst) + " (" + worstOp + ")";
}

/// How L3 chose its calls, for the detail line: `sampled` ops of many
/// weights, and `shared` ops whose kernels had run their spread of T on an
/// earlier op.
struct Coverage {
  size_t sampled = 0, shared = 0;
};

std::string kernelSummary(size_t calls, size_t ops, size_t entries,
                          const Worst &w, const Coverage &coverage,
                          const LadderOptions &options) {
  std::string s = std::to_string(calls) + " calls of " +
                  std::to_string(entries) + " kernel entries over " +
                  std::to_string(ops) + " ops";
  if (coverage.sampled)
    s += " (" + std::to_string(coverage.sampled) + " ops of at least " +
         std::to_string(options.sampleAboveWeights) +
         " weights sampled: each entry point at its smallest T, " +
         std::to_string(kRowSample) +
         " output rows checked per call, drawn with seed " +
         kRowSampleSeedText +
         " and the op's name; --exhaustive runs every T on every row)";
  if (coverage.shared)
    s += " (" + std::to_string(coverage.shared) +
         " ops at each entry point's smallest T on every row, their kernels' "
         "spread of T having run on an earlier op; --exhaustive runs every "
         "T on every op)";
  return s + ": kernel error (vs float64 X W_hat^T) at most " +
         format("%.3g", w.ratio) + " of its bound (worst: " + w.where +
         "), max |y - y_ref| " + format("%.3g", w.maxAbs);
}

/// W_hat and, where they differ from |W_hat|, its rounding magnitudes
/// (empty otherwise: ReconstructedPart).
struct ReferenceOfOp {
  const std::vector<double> &w, &magnitudes;
  const std::vector<double> *magnitudesOrNull() const {
    return magnitudes.empty() ? nullptr : &magnitudes;
  }
};

/// One call: run, measure, and say what failed. With `rows` (a sampled
/// op), `ref` holds only those weight rows.
Expected<KernelError> runAndMeasure(OpKernel &kernel, const KernelInstance &k,
                                    const std::string &op, ReferenceOfOp ref,
                                    const std::vector<double> &bias, int64_t t,
                                    const std::vector<int64_t> *rows) {
  QTENSOR_ASSIGN_OR_RETURN(
      HostTensor x, deterministicActivations(k.activation, t, k.k,
                                             kDefaultActivationSeed, op));
  HostTensor y;
  QTENSOR_TRY(kernel.run(x, y));
  // Activation quantization is the kernel's contract, not its error.
  std::vector<double> xk = kernelActivations(x.toDoubles(), t, k);
  if (rows)
    return measureKernelErrorOnRows(xk, ref.w, bias, y.toDoubles(), t, k.n, k.k,
                                    k.output, *rows, ref.magnitudesOrNull());
  return measureKernelError(xk, ref.w, bias, y.toDoubles(), t, k.n, k.k,
                            k.output, ref.magnitudesOrNull());
}

std::string describeFailure(const KernelError &e, const KernelInstance &k,
                            const std::string &op, int64_t t) {
  if (!e.finite)
    return op + " via " + k.id + " (T = " + std::to_string(t) +
           "): non-finite output";
  return op + " via " + k.id + " (T = " + std::to_string(t) +
         "): kernel error " + format("%.3g", e.worstRatio) +
         " times its bound at output [" + std::to_string(e.worstIndex / k.n) +
         ", " + std::to_string(e.worstIndex % k.n) + "] (max |y - y_ref| " +
         format("%.3g", e.maxAbsError) + ")";
}

/// tp > 1 (see the top of the file): "composed over R ranks: ..." on
/// success, the failing op, T and ratio otherwise.
Expected<std::string> composedRanks(const artifact::Artifact &a,
                                    const ArtifactCodePolicy &code) {
  LoadOptions o;
  o.code = code;
  o.backend = BackendChoice::Host;
  o.warmup = false;
  QTENSOR_ASSIGN_OR_RETURN(std::unique_ptr<TensorParallelGroup> group,
                           TensorParallelGroup::load(a.directory(), o));
  Worst worst;
  size_t calls = 0;
  for (const GroupOp &op : group->ops())
    for (int64_t t : {int64_t(5), kernels::kMaxDecodeTokens + 1}) {
      if (!op.plans[0]->phaseFor(t))
        continue; // the artifact has no kernel for that phase
      QTENSOR_ASSIGN_OR_RETURN(HostTensor x,
                               deterministicActivations(op.activation, t, op.k,
                                                        kDefaultActivationSeed,
                                                        op.op));
      QTENSOR_ASSIGN_OR_RETURN(GroupOutput out, group->run(op, x));
      QTENSOR_ASSIGN_OR_RETURN(KernelError e, group->check(op, x, out.y));
      std::string where = op.op + " T=" + std::to_string(t);
      ++calls;
      worst.update(e, where);
      if (!e.within())
        return makeError(
            where, " joined by ",
            describeCollective(op.collective, group->tp()),
            e.finite ? ": error " + format("%.3g", e.worstRatio) +
                           " times its bound at output [" +
                           std::to_string(e.worstIndex / size_t(op.n)) + ", " +
                           std::to_string(e.worstIndex % size_t(op.n)) +
                           "] (max |y - y_ref| " +
                           format("%.3g", e.maxAbsError) + ")"
                     : std::string(": non-finite output"));
    }
  return "composed over " + std::to_string(group->tp()) +
         " ranks (host collectives, not NCCL): " + std::to_string(calls) +
         " joined calls of " + std::to_string(group->ops().size()) +
         " ops against the whole weight, at most " +
         format("%.3g", worst.ratio) +
         " of their bounds (worst: " + worst.where + ")";
}

LevelResult hostLevel(const artifact::Artifact &a,
                      const std::vector<KernelInstance> &instances,
                      const LadderOptions &options) {
  LevelResult r{"L3", "operator parity (host)", false, ""};
  HostCodeSet libraries;
  std::string codeNote;
  Worst worst;
  size_t calls = 0, entries = 0;
  Coverage coverage;
  // The kernels that have run their spread of T (tokensFor) on an op.
  std::set<size_t> spreadRun;
  // Each host kernel with its resolved entry points, and the kernels that
  // serve each op (in the order the manifest lists them).
  struct Resolved {
    const KernelInstance *instance;
    std::vector<void *> fns;
  };
  std::vector<Resolved> kernels;
  std::vector<std::string> opOrder;
  std::map<std::string, std::vector<size_t>> kernelsOf;
  for (const KernelInstance &k : instances) {
    if (!k.isHost())
      continue;
    ++entries;
    if (Status cpu = checkHostCpu(k.cpu, k.where()); !cpu) {
      r.detail = cpu.message();
      return r;
    }
    const MappedFile *file = a.file(k.codeFile());
    if (!file) {
      r.detail = k.where() + ": " + k.codeFile() + " is not mapped";
      return r;
    }
    // The kernels this level runs, never the artifact's own code unless it
    // is trusted (ArtifactCode.h).
    auto found =
        libraries.forFile(options.code, a.manifest(), nullptr, k.codeFile(),
                          k.codeFile(), file->data(), size_t(file->size()));
    if (!found) {
      r.detail = found.message();
      return r;
    }
    if (found->how)
      codeNote = *found->how;
    const std::shared_ptr<HostKernelLibrary> &lib = found->library;
    Resolved resolved{&k, {}};
    // A W8A8 record's quantizer entries follow its GEMV's.
    std::vector<EntryPoint> points = k.entries;
    if (k.activationQuant)
      points.insert(points.end(), k.activationQuant->entries.begin(),
                    k.activationQuant->entries.end());
    for (const EntryPoint &e : points) {
      auto fn = lib->resolve(e.symbol);
      if (!fn) {
        r.detail = k.where() + ": " + fn.message();
        return r;
      }
      resolved.fns.push_back(*fn);
    }
    kernels.push_back(std::move(resolved));
    for (const std::string &op : k.ops) {
      auto [it, fresh] = kernelsOf.try_emplace(op);
      if (fresh)
        opOrder.push_back(op);
      it->second.push_back(kernels.size() - 1);
    }
  }
  // One op at a time: its float64 W_hat is built once for every kernel that
  // serves it and dropped before the next op, and the pages of its stored
  // tensors are given back, so L3's memory follows the largest op, not the
  // model. A sampled op builds only the rows its calls are checked on.
  for (const std::string &op : opOrder) {
    auto t = a.tensor(op);
    if (!t) {
      r.detail = t.message();
      return r;
    }
    const artifact::QuantizedTensor *q = t->entry->quantized();
    const artifact::Mixed2416Tensor *mixed = t->entry->mixed2416();
    if ((!q && !mixed) || t->entry->logicalShape().size() != 2) {
      r.detail = op + ": not a quantized [N, K] weight";
      return r;
    }
    const std::vector<int64_t> &shape = t->entry->logicalShape();
    bool sampled = sampledOp(shape[0], shape[1], options);
    coverage.sampled += sampled;
    bool shared = false;
    const std::vector<int64_t> rows =
        sampled ? sampledRows(shape[0], op) : std::vector<int64_t>();
    std::vector<double> w, magnitudes;
    std::vector<int32_t> rowW4; // a mixed tensor's kernels' row table
    if (mixed) {
      auto streams =
          artifact::readMixed2416Streams(op, mixed->logical, t->streams);
      auto table =
          streams ? mixed2416RowW4Groups(mixed->logical, streams->precisionMap)
                  : Expected<std::vector<int32_t>>(streams.error());
      if (!table) {
        r.detail = op + ": " + table.message();
        return r;
      }
      rowW4 = table.take();
      // The kernel sums the dense codes, then each outlier's term: the
      // bound scales with both (Mixed2416Part::RoundingMagnitude).
      for (auto [part, out] :
           {std::pair{Mixed2416Part::Value, &w},
            {Mixed2416Part::RoundingMagnitude, &magnitudes}}) {
        const int64_t k = shape[1];
        if (sampled) {
          out->resize(rows.size() * size_t(k));
          for (size_t i = 0; i < rows.size(); ++i)
            reconstructMixed2416Rows(mixed->logical, *streams, rowW4, rows[i],
                                     1, out->data() + i * size_t(k), part);
        } else {
          out->resize(size_t(shape[0]) * size_t(k));
          reconstructMixed2416Rows(mixed->logical, *streams, rowW4, 0, shape[0],
                                   out->data(), part);
        }
      }
    } else {
      auto reconstruct = [&](ReconstructedPart part) {
        return sampled ? reconstructWeightRows(*t->entry, *t->codes, *t->scales,
                                               t->zeros, rows, part)
                       : reconstructWeight(*t->entry, *t->codes, *t->scales,
                                           t->zeros, part);
      };
      auto rec = reconstruct(ReconstructedPart::Value);
      // With a min the bound scales with |s q| + |m|, not |W_hat|.
      auto mag = hasOwnRoundingMagnitudes(q->logical.descriptor)
                     ? reconstruct(ReconstructedPart::RoundingMagnitude)
                     : Expected<std::vector<double>>(std::vector<double>());
      if (!rec || !mag) {
        r.detail = !rec ? rec.message() : mag.message();
        return r;
      }
      w = rec.take();
      magnitudes = mag.take();
    }
    for (size_t index : kernelsOf[op]) {
      const KernelInstance &k = *kernels[index].instance;
      std::vector<double> bias;
      if (k.bias) {
        // A bias-adding kernel is never row-parallel: a rank suffix means a
        // column slice, whose bias slice carries the same suffix.
        auto [base, rank] = splitRankName(op);
        std::string name =
            biasTensorName(base, rank.value_or(0), rank.has_value());
        auto b = a.tensor(name);
        if (!b || !b->data) {
          r.detail = op + ": " + k.id +
                     " adds a bias, but the artifact has "
                     "no plain tensor \"" +
                     name + "\"";
          return r;
        }
        auto values = safetensors::toFloat64(*b->data);
        if (!values) {
          r.detail = values.message();
          return r;
        }
        bias = values.take();
      }
      std::unique_ptr<OpKernel> kernel;
      if (mixed) {
        auto operands =
            makeMixed2416HostOperands(k, *t->entry, t->streams, rowW4, bias);
        if (!operands) {
          r.detail = operands.message();
          return r;
        }
        kernel = makeMixed2416HostKernel(
            k, kernels[index].fns,
            std::shared_ptr<const WeightOperands>(operands.take()),
            k.activation, k.output);
      } else {
        OpTensorViews views;
        views.codes = t->codes;
        views.scales = t->scales;
        views.zeros = t->zeros;
        views.scaleCodes = t->scaleCodes;
        views.minCodes = t->minCodes;
        views.superScales = t->superScales;
        views.superMins = t->superZeros;
        auto operands = makeHostOperands(k, *t->entry, views, bias);
        if (!operands) {
          r.detail = operands.message();
          return r;
        }
        auto shared = std::shared_ptr<const WeightOperands>(operands.take());
        kernel = k.activationQuant
                     ? makeW8A8HostKernel(k, kernels[index].fns, shared,
                                          k.activation, k.output)
                     : makeHostNativeKernel(k, kernels[index].fns, shared,
                                            k.activation, k.output);
        if (const auto &perm = q->logical.descriptor.permutation)
          kernel = makePermutedInputKernel(*perm, std::move(kernel));
      }
      // A kernel is one compiled code for every op it serves (its N and K
      // included): what T exercises in it (tails, tiles, entry points) is
      // the same for each, so its spread of T runs on the first unsampled
      // op it serves, and the ops after it run each entry point at its
      // smallest T, every row checked.
      bool smallestOnly = sampled;
      if (!sampled && !options.exhaustive && !spreadRun.insert(index).second) {
        smallestOnly = true;
        shared = true;
      }
      for (int64_t tokens : tokensFor(k, smallestOnly)) {
        if (k.n != shape[0]) {
          r.detail = op + " via " + k.id +
                     ": the kernel computes N = " + std::to_string(k.n) +
                     ", the weight has " + std::to_string(shape[0]) + " rows";
          return r;
        }
        auto e = runAndMeasure(*kernel, k, op, {w, magnitudes}, bias, tokens,
                               sampled ? &rows : nullptr);
        if (!e) {
          r.detail = op + " via " + k.id + " (T = " + std::to_string(tokens) +
                     "): " + e.message();
          return r;
        }
        ++calls;
        worst.update(*e, op + " T=" + std::to_string(tokens));
        if (!e->within()) {
          r.detail = describeFailure(*e, k, op, tokens) + "; " +
                     quantizationSummary(a);
          return r;
        }
      }
    }
    coverage.shared += shared;
    for (const safetensors::TensorView *v : {t->codes, t->scales, t->zeros})
      if (v)
        releaseMappedPages(v->data, v->byteSize());
    for (const auto &[key, v] : t->streams)
      if (v)
        releaseMappedPages(v->data, v->byteSize());
  }
  std::set<std::string> ops(opOrder.begin(), opOrder.end());
  std::string composed;
  if (a.manifest().topology.tp > 1) {
    auto c = composedRanks(a, options.code);
    if (!c) {
      r.detail =
          kernelSummary(calls, ops.size(), entries, worst, coverage, options) +
          "; composed over " + std::to_string(a.manifest().topology.tp) +
          " ranks: " + c.message();
      return r;
    }
    composed = c.take() + "; ";
  } else {
    // The kernels ran above through the host backend directly; the
    // artifact must also pass the runtime's own load (schema, trace, plan),
    // so that "verified" implies "loads".
    LoadOptions o;
    o.code = options.code;
    o.backend = BackendChoice::Host;
    o.warmup = false;
    auto model = loadModel(a.directory(), o);
    if (!model) {
      r.detail =
          kernelSummary(calls, ops.size(), entries, worst, coverage, options) +
          "; the runtime does not load it: " + model.message();
      return r;
    }
  }
  r.ok = true;
  r.detail =
      kernelSummary(calls, ops.size(), entries, worst, coverage, options) +
      "; " + composed + quantizationSummary(a) +
      (codeNote.empty() ? std::string() : "; host code: " + codeNote);
  return r;
}

/// GPU artifacts: each rank through the runtime's CUDA backend.
LevelResult gpuLevel(const artifact::Artifact &a, const std::string &target,
                     const LadderOptions &options) {
  LevelResult r{"L3", "operator parity (host)", false, ""};
  auto device = CudaDevice::open();
  if (!device) {
    r.detail = "not run: no host kernels in a " + target +
               " artifact and no GPU here (" + device.message() +
               "); run it on a GPU: qtc run DIR --backend cuda --check";
    return r;
  }
  std::string gpu = (*device)->info().name + " " + (*device)->target().name;
  device->reset(); // the loader opens its own
  r.name = "operator parity (" + gpu + ")";
  Worst worst;
  size_t calls = 0, ops = 0;
  Coverage coverage; // every op's spread of T runs here: a GPU is fast
  for (int64_t rank = 0; rank < a.manifest().topology.tp; ++rank) {
    LoadOptions o;
    o.code = options.code;
    o.rank = rank;
    o.backend = BackendChoice::Cuda;
    o.warmup = false;
    auto model = loadModel(a.directory(), o);
    if (!model) {
      r.detail = "rank " + std::to_string(rank) + ": " + model.message();
      return r;
    }
    for (const OpPlan &op : (*model)->plan().ops) {
      ++ops;
      bool sampled = sampledOp(op.n(), op.k(), options);
      coverage.sampled += sampled;
      auto w = (*model)->referenceWeight(op);
      auto b = (*model)->referenceBias(op);
      auto mag = (*model)->referenceMagnitudes(op);
      if (!w || !b || !mag) {
        r.detail = !w ? w.message() : !b ? b.message() : mag.message();
        return r;
      }
      for (const PhasePlan &p : op.phases)
        for (const KernelInstance *k : p.instances)
          for (int64_t t : tokensFor(*k, sampled)) {
            auto x = deterministicActivations(
                op.activation, t, op.k(), kDefaultActivationSeed, op.tensor);
            auto y = x ? (*model)->run(op.tensor, *x)
                       : Expected<HostTensor>(x.error());
            if (!y) {
              r.detail = y.message();
              return r;
            }
            KernelError e = measureKernelError(
                op.kernelActivations(x->toDoubles(), t), *w, *b, y->toDoubles(),
                t, op.n(), op.k(), op.output, mag->empty() ? nullptr : &*mag);
            ++calls;
            worst.update(e, op.tensor + " T=" + std::to_string(t));
            if (!e.within()) {
              r.detail = describeFailure(e, *k, op.tensor, t) + "; " +
                         quantizationSummary(a);
              return r;
            }
          }
    }
  }
  // The joins are checked on the host (its twins), as without a GPU.
  std::string composed;
  if (a.manifest().topology.tp > 1) {
    auto c = composedRanks(a, options.code);
    if (!c) {
      r.detail = kernelSummary(calls, ops, 0, worst, coverage, options) +
                 "; composed over " + std::to_string(a.manifest().topology.tp) +
                 " ranks: " + c.message();
      return r;
    }
    composed = c.take() + "; ";
  }
  r.ok = true;
  r.detail = kernelSummary(calls, ops, 0, worst, coverage, options) + "; " +
             composed + quantizationSummary(a);
  return r;
}

} // namespace

LevelResult levelOperator(const artifact::Artifact &a,
                          const LadderOptions &options) {
  LevelResult r{"L3", "operator parity (host)", false, ""};
  std::vector<KernelInstance> instances;
  bool host = false, gpu = false;
  std::string target;
  for (size_t i = 0; i < a.manifest().kernels.size(); ++i) {
    KernelInstance k = kernelInstanceOf(a.manifest(), i);
    host |= k.isHost();
    gpu |= k.isGpu();
    if (k.isGpu())
      target = k.target.name;
    instances.push_back(std::move(k));
  }
  // A GPU artifact runs its own kernels when a GPU is here; without one,
  // the host twins it carries (the same emitter and per-lane arithmetic,
  // reading the same stored bytes) stand in, and the detail says so.
  if (gpu && host) {
    if (auto device = CudaDevice::open(); device) {
      device->reset();
      return gpuLevel(a, target, options);
    }
    LevelResult r = hostLevel(a, instances, options);
    r.name = "operator parity (host twins of the " + target + " kernels)";
    return r;
  }
  if (host)
    return hostLevel(a, instances, options);
  if (gpu)
    return gpuLevel(a, target, options);
  // Every op runs the full-dequant reference: there is no kernel to test.
  r.ok = true;
  r.detail = a.manifest().kernels.empty()
                 ? "no quantized ops: every linear is kept in float"
                 : "no native kernels: every op runs the full-dequant "
                   "reference path, which is the oracle itself; " +
                       quantizationSummary(a);
  return r;
}

} // namespace qtensor::verify::detail
