//===- TensorParallel.cpp - Every rank of a tp artifact, one process ------===//
//
// The host stand-in for a tensor-parallel deployment's collectives (not
// NCCL): see TensorParallel.h.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Runtime/TensorParallel.h"

#include "qtensor/Formats/ArtifactPath.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

using namespace qtensor;
using namespace qtensor::runtime;
using kernels::RankSlice;
using kernels::Topology;

RankExchange::~RankExchange() = default;

namespace {

// What crosses between the ranks' processes: a rank's output with the
// record of the call that made it, or a float64 reference slice.

void putU64(std::vector<uint8_t> &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t(v >> (8 * i)));
}

struct Reader {
  const std::vector<uint8_t> &in;
  size_t at = 0;
  bool u64(uint64_t &v) {
    if (in.size() - at < 8)
      return false;
    v = 0;
    for (int i = 0; i < 8; ++i)
      v |= uint64_t(in[at + size_t(i)]) << (8 * i);
    at += 8;
    return true;
  }
  bool bytes(uint64_t n, std::string &out) {
    if (in.size() - at < n)
      return false;
    out.assign(reinterpret_cast<const char *>(in.data() + at), size_t(n));
    at += size_t(n);
    return true;
  }
};

std::vector<uint8_t> packOutput(const HostTensor &y, const DispatchRecord &d) {
  std::vector<uint8_t> out;
  putU64(out, uint64_t(y.dtype));
  putU64(out, uint64_t(y.rows));
  putU64(out, uint64_t(y.cols));
  putU64(out, y.bytes.size());
  out.insert(out.end(), y.bytes.begin(), y.bytes.end());
  std::string record = nlohmann::json{
      {"op", d.op},
      {"kernel", d.kernel},
      {"backend", d.backend},
      {"phase", kernels::toString(d.phase)},
      {"tokens", d.tokens},
      {"seconds", d.seconds},
      {"fallback",
       d.fallback}}.dump();
  putU64(out, record.size());
  out.insert(out.end(), record.begin(), record.end());
  return out;
}

Expected<std::pair<HostTensor, DispatchRecord>>
unpackOutput(const std::vector<uint8_t> &in, int64_t rank) {
  Reader r{in};
  uint64_t dtype = 0, rows = 0, cols = 0, n = 0, m = 0;
  std::string data, record;
  if (!r.u64(dtype) || !r.u64(rows) || !r.u64(cols) || !r.u64(n) ||
      !r.bytes(n, data) || !r.u64(m) || !r.bytes(m, record) ||
      dtype > uint64_t(FloatType::F32))
    return makeError("rank ", rank, " sent a malformed output");
  std::pair<HostTensor, DispatchRecord> out;
  out.first.dtype = FloatType(dtype);
  out.first.rows = int64_t(rows);
  out.first.cols = int64_t(cols);
  out.first.bytes.assign(data.begin(), data.end());
  auto j = nlohmann::json::parse(record, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    return makeError("rank ", rank, " sent a malformed call record");
  DispatchRecord &d = out.second;
  d.op = j.value("op", "");
  d.kernel = j.value("kernel", "");
  d.backend = j.value("backend", "");
  d.phase = kernels::parsePhase(j.value("phase", "decode"))
                .value_or(kernels::Phase::Decode);
  d.tokens = j.value("tokens", int64_t(0));
  d.seconds = j.value("seconds", 0.0);
  d.fallback = j.value("fallback", false);
  return out;
}

std::vector<uint8_t> packDoubles(const std::vector<double> &v) {
  std::vector<uint8_t> out(v.size() * sizeof(double));
  if (!v.empty())
    std::memcpy(out.data(), v.data(), out.size());
  return out;
}

Expected<std::vector<double>> unpackDoubles(const std::vector<uint8_t> &in,
                                            int64_t rank) {
  if (in.size() % sizeof(double))
    return makeError("rank ", rank, " sent a malformed reference slice");
  std::vector<double> v(in.size() / sizeof(double));
  if (!v.empty())
    std::memcpy(v.data(), in.data(), in.size());
  return v;
}

} // namespace

Collective qtensor::runtime::collectiveFor(Topology topology, int64_t ranks) {
  if (ranks <= 1)
    return Collective::None;
  if (topology == Topology::Column)
    return Collective::AllGather;
  if (topology == Topology::Row)
    return Collective::AllReduceSum;
  return Collective::None;
}

std::string qtensor::runtime::describeCollective(Collective c, int64_t ranks) {
  std::string r = std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
  switch (c) {
  case Collective::AllGather:
    return "all_gather(" + r + ")";
  case Collective::AllReduceSum:
    return "all_reduce(sum, " + r + ")";
  case Collective::None:
    break;
  }
  // Replicated: every rank computes the whole output; they must agree.
  return ranks > 1 ? "none (" + r + ", identical)" : "none";
}

Expected<HostTensor> qtensor::runtime::sliceColumns(const HostTensor &x,
                                                    int64_t from,
                                                    int64_t count) {
  if (from < 0 || count < 1 || from > x.cols || count > x.cols - from)
    return makeError("columns [", from, ", ", from + count,
                     ") are not inside [0, ", x.cols, ")");
  QTENSOR_ASSIGN_OR_RETURN(HostTensor out,
                           HostTensor::zeros(x.dtype, x.rows, count));
  size_t eb = HostTensor::elementBytes(x.dtype);
  for (int64_t t = 0; t < x.rows; ++t)
    std::memcpy(&out.bytes[size_t(t) * size_t(count) * eb],
                &x.bytes[(size_t(t) * size_t(x.cols) + size_t(from)) * eb],
                size_t(count) * eb);
  return out;
}

Expected<HostTensor>
qtensor::runtime::allGatherColumns(const std::vector<HostTensor> &parts,
                                   const std::vector<RankSlice> &slices,
                                   int64_t n) {
  if (parts.empty() || parts.size() != slices.size())
    return makeError("all_gather: ", parts.size(), " outputs for ",
                     slices.size(), " rank slices");
  // The slices must tile [0, n): each column has exactly one owner.
  std::vector<size_t> order(slices.size());
  for (size_t r = 0; r < order.size(); ++r)
    order[r] = r;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return slices[a].nOffset < slices[b].nOffset;
  });
  int64_t next = 0;
  for (size_t r : order) {
    if (slices[r].nOffset != next || slices[r].n < 1)
      return makeError("all_gather: rank ", r, "'s columns [",
                       slices[r].nOffset, ", ", slices[r].nOffset + slices[r].n,
                       ") do not continue the tiling of [0, ", n, ") at ",
                       next);
    next += slices[r].n;
  }
  if (next != n)
    return makeError("all_gather: the rank slices cover [0, ", next,
                     "), the op has N = ", n);
  const HostTensor &first = parts.front();
  for (size_t r = 0; r < parts.size(); ++r) {
    if (parts[r].dtype != first.dtype || parts[r].rows != first.rows)
      return makeError("all_gather: rank ", r, "'s output is ",
                       qtensor::toString(parts[r].dtype), " [", parts[r].rows,
                       ", ...], rank 0's is ", qtensor::toString(first.dtype),
                       " [", first.rows, ", ...]");
    if (parts[r].cols != slices[r].n)
      return makeError("all_gather: rank ", r, "'s output has ", parts[r].cols,
                       " columns, its slice has n = ", slices[r].n);
  }
  QTENSOR_ASSIGN_OR_RETURN(HostTensor out,
                           HostTensor::zeros(first.dtype, first.rows, n));
  size_t eb = HostTensor::elementBytes(first.dtype);
  for (size_t r = 0; r < parts.size(); ++r)
    for (int64_t t = 0; t < first.rows; ++t)
      std::memcpy(
          &out.bytes[(size_t(t) * size_t(n) + size_t(slices[r].nOffset)) * eb],
          &parts[r].bytes[size_t(t) * size_t(slices[r].n) * eb],
          size_t(slices[r].n) * eb);
  return out;
}

Expected<HostTensor>
qtensor::runtime::allReduceSum(const std::vector<HostTensor> &parts,
                               const std::vector<double> &bias,
                               FloatType output) {
  if (parts.empty())
    return makeError("all_reduce: no outputs to reduce");
  const HostTensor &first = parts.front();
  for (size_t r = 0; r < parts.size(); ++r)
    if (parts[r].dtype != output || parts[r].rows != first.rows ||
        parts[r].cols != first.cols)
      return makeError("all_reduce: rank ", r, "'s partial is ",
                       qtensor::toString(parts[r].dtype), " [", parts[r].rows,
                       ", ", parts[r].cols, "], expected ",
                       qtensor::toString(output), " [", first.rows, ", ",
                       first.cols, "]");
  if (!bias.empty() && int64_t(bias.size()) != first.cols)
    return makeError("all_reduce: the bias has ", bias.size(),
                     " values, the output ", first.cols, " columns");
  std::vector<double> sums(first.size());
  for (size_t i = 0; i < sums.size(); ++i) {
    // f16/bf16/f32 values are exact in f32; the additions round in f32.
    float acc = float(parts[0].at(i));
    for (size_t r = 1; r < parts.size(); ++r)
      acc += float(parts[r].at(i));
    if (!bias.empty())
      acc += float(bias[i % size_t(first.cols)]);
    sums[i] = double(acc);
  }
  // fromDoubles rounds each (exact) f32 sum once to the output dtype.
  return HostTensor::fromDoubles(output, first.rows, first.cols, sums);
}

Status
qtensor::runtime::checkReplicasAgree(const std::vector<HostTensor> &parts) {
  // Every rank ran the same kernel on the same bytes: a replica that
  // differs is a nondeterministic kernel, not a rounding difference.
  for (size_t r = 1; r < parts.size(); ++r) {
    const HostTensor &a = parts[0], &b = parts[r];
    if (b.dtype != a.dtype || b.rows != a.rows || b.cols != a.cols)
      return makeError("rank ", r, "'s output is ", qtensor::toString(b.dtype),
                       " [", b.rows, ", ", b.cols, "], rank 0's ",
                       qtensor::toString(a.dtype), " [", a.rows, ", ", a.cols,
                       "]");
    if (b.bytes == a.bytes)
      continue;
    size_t eb = HostTensor::elementBytes(a.dtype), i = 0;
    while (i < a.size() &&
           std::memcmp(&b.bytes[i * eb], &a.bytes[i * eb], eb) == 0)
      ++i;
    return makeError("rank ", r, "'s output differs from rank 0's at [",
                     i / size_t(a.cols), ", ", i % size_t(a.cols), "] (",
                     b.at(i), " vs ", a.at(i), ")");
  }
  return Status::ok();
}

double
qtensor::runtime::allReduceErrorBound(const std::vector<PartialTerm> &ranks,
                                      double bias, double yRef,
                                      FloatType output) {
  const double u = std::ldexp(1.0, -24);
  double m = double(ranks.size() + 1);
  double gamma = m * u / (1.0 - m * u);
  double partialErrors = 0, magnitudes = 0;
  for (const PartialTerm &p : ranks) {
    double e = kernelErrorBound(p.absSum, p.ref, p.k, output);
    partialErrors += e;
    magnitudes += std::fabs(p.ref) + e;
  }
  double reduction = gamma * (magnitudes + std::fabs(bias));
  double uOut = output == FloatType::F16    ? std::ldexp(1.0, -11)
                : output == FloatType::BF16 ? std::ldexp(1.0, -8)
                                            : 0.0;
  double underflow = output == FloatType::F16 ? std::ldexp(1.0, -25) : 0.0;
  return partialErrors + reduction +
         uOut * (std::fabs(yRef) + partialErrors + reduction) + underflow;
}

namespace {

/// Columns [from, from + count) of a row-major [rows, cols] matrix.
std::vector<double> columns(const std::vector<double> &m, int64_t rows,
                            int64_t cols, int64_t from, int64_t count) {
  std::vector<double> out;
  out.reserve(size_t(rows) * size_t(count));
  for (int64_t r = 0; r < rows; ++r)
    out.insert(out.end(), m.begin() + r * cols + from,
               m.begin() + r * cols + from + count);
  return out;
}

} // namespace

KernelError qtensor::runtime::measureAllReduceError(
    const std::vector<double> &x, const std::vector<double> &w,
    const std::vector<double> &bias, const std::vector<RankSlice> &slices,
    const std::vector<double> &y, int64_t t, int64_t n, int64_t k,
    FloatType output) {
  std::vector<double> ref = referenceLinear(x, w, t, n, k, bias);
  std::vector<std::vector<double>> partial, mag;
  std::vector<int64_t> terms;
  KernelError e;
  for (const RankSlice &s : slices) {
    if (s.kOffset < 0 || s.k < 1 || s.kOffset + s.k > k) {
      e.finite = false; // not a K slice of this weight: nothing to bound
      return e;
    }
    std::vector<double> xs = columns(x, t, k, s.kOffset, s.k);
    std::vector<double> ws = columns(w, n, k, s.kOffset, s.k);
    partial.push_back(referenceLinear(xs, ws, t, n, s.k));
    mag.push_back(absoluteProducts(xs, ws, t, n, s.k));
    terms.push_back(s.k);
  }
  std::vector<PartialTerm> p(slices.size());
  for (size_t i = 0; i < ref.size() && i < y.size(); ++i) {
    for (size_t r = 0; r < p.size(); ++r)
      p[r] = {mag[r][i], partial[r][i], terms[r]};
    double b = bias.empty() ? 0.0 : bias[i % size_t(n)];
    double err = std::fabs(y[i] - ref[i]);
    if (!std::isfinite(err)) {
      if (e.finite)
        e.nonFiniteIndex = i;
      e.finite = false;
      continue;
    }
    double ratio = err / allReduceErrorBound(p, b, ref[i], output);
    e.maxAbsError = std::max(e.maxAbsError, err);
    if (ratio > e.worstRatio) {
      e.worstRatio = ratio;
      e.worstIndex = i;
    }
  }
  e.finite &= y.size() == ref.size();
  return e;
}

//===----------------------------------------------------------------------===//
// TensorParallelGroup
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<TensorParallelGroup>>
TensorParallelGroup::load(const std::string &dir, LoadOptions options) {
  std::unique_ptr<TensorParallelGroup> g(new TensorParallelGroup());
  // Every rank plans the same op; its slices carry the @rank suffix, which
  // must name a rank of the artifact (checked once tp is known).
  std::vector<std::pair<std::string, int64_t>> suffixed;
  for (std::string &name : options.ops) {
    auto [base, rank] = splitRankName(name);
    if (rank)
      suffixed.emplace_back(name, *rank);
    name = base;
  }
  // Rank 0 says how many ranks there are (manifest.topology.tp).
  int64_t tp = 1;
  for (int64_t r = 0; r < tp; ++r) {
    options.rank = r;
    auto model = loadModel(dir, options);
    if (!model)
      return makeError("rank ", r, ": ", model.message());
    if (r == 0)
      tp = (*model)->plan().tp;
    g->models.push_back(model.take());
  }
  for (const auto &[name, rank] : suffixed)
    if (rank >= tp)
      return makeError("op \"", name, "\": rank ", rank, " is outside [0, ", tp,
                       ") (topology.tp = ", tp, ")");
  g->ranks = tp;
  QTENSOR_TRY(g->collectOps());
  QTENSOR_TRY(g->loadReducedBiases(dir, options));
  return g;
}

Expected<std::unique_ptr<TensorParallelGroup>>
TensorParallelGroup::loadRank(const std::string &dir, LoadOptions options,
                              RankExchange &exchange) {
  std::unique_ptr<TensorParallelGroup> g(new TensorParallelGroup());
  g->exchange = &exchange;
  g->firstLocal = exchange.rank();
  for (std::string &name : options.ops)
    name = splitRankName(name).first;
  options.rank = exchange.rank();
  // Every rank learns whether every rank loaded (and with how many ranks)
  // before any of them waits on another.
  auto model = loadModel(dir, options);
  Status prepared = Status::ok();
  if (model) {
    g->ranks = (*model)->plan().tp;
    g->models.push_back(model.take());
    if (g->ranks != exchange.size())
      prepared = makeError("the artifact has topology.tp = ", g->ranks,
                           ", but ", exchange.size(), " processes run it (",
                           exchange.describe(), ")");
    if (prepared)
      prepared = g->collectOps();
    if (prepared)
      prepared = g->loadReducedBiases(dir, options);
  } else {
    prepared = model.error();
  }
  // Each rank's plan, for the others to compare: ranks that planned
  // different ops would enter different collectives.
  std::string plan = prepared ? g->planFingerprint() : std::string();
  Expected<std::vector<uint8_t>> mine =
      prepared ? Expected<std::vector<uint8_t>>(
                     std::vector<uint8_t>(plan.begin(), plan.end()))
               : Expected<std::vector<uint8_t>>(prepared.error());
  auto everyone = exchange.allGather(mine);
  if (!everyone)
    return everyone.error();
  for (size_t r = 1; r < everyone->size(); ++r)
    if ((*everyone)[r] != (*everyone)[0])
      return makeError("rank ", r, " plans its ops differently from rank 0 (",
                       "names, shapes or placements): the ranks do not run "
                       "one artifact");
  return g;
}

std::string TensorParallelGroup::planFingerprint() const {
  std::string out;
  for (const GroupOp &op : opList) {
    out += op.op + " " + std::to_string(op.n) + "x" + std::to_string(op.k) +
           " " + kernels::toString(op.topology) + " " +
           describeCollective(op.collective, ranks);
    for (const RankSlice &s : op.slices)
      out += " [" + std::to_string(s.nOffset) + "+" + std::to_string(s.n) +
             "," + std::to_string(s.kOffset) + "+" + std::to_string(s.k) + "]";
    out += "\n";
  }
  return out;
}

Status TensorParallelGroup::agree(Status local) const {
  if (!exchange)
    return local;
  auto all = exchange->allGather(
      local ? Expected<std::vector<uint8_t>>(std::vector<uint8_t>())
            : Expected<std::vector<uint8_t>>(local.error()));
  if (!all)
    return all.error();
  return Status::ok();
}

std::string TensorParallelGroup::transport() const {
  return exchange ? exchange->describe() : std::string("in process");
}

Expected<std::vector<std::vector<uint8_t>>> TensorParallelGroup::everyRank(
    std::vector<Expected<std::vector<uint8_t>>> local) const {
  if (exchange)
    return exchange->allGather(local.front());
  std::vector<std::vector<uint8_t>> all;
  for (size_t i = 0; i < local.size(); ++i) {
    if (!local[i])
      return makeError("rank ", firstLocal + int64_t(i), ": ",
                       local[i].message());
    all.push_back(local[i].take());
  }
  return all;
}

Status TensorParallelGroup::collectOps() {
  const RunPlan &first = models[0]->plan();
  for (size_t r = 1; r < models.size(); ++r)
    if (models[r]->plan().ops.size() != first.ops.size())
      return makeError("rank ", r, " plans ", models[r]->plan().ops.size(),
                       " ops, rank 0 plans ", first.ops.size());
  for (const OpPlan &op0 : first.ops) {
    GroupOp g;
    g.op = op0.op;
    g.topology = op0.signature.topology;
    g.n = op0.signature.n;
    g.k = op0.signature.k;
    g.activation = op0.activation;
    g.output = op0.output;
    bool sliced =
        (g.topology == Topology::Column || g.topology == Topology::Row) &&
        op0.signature.ranks.size() > 1;
    g.collective = sliced ? collectiveFor(g.topology, ranks) : Collective::None;
    for (size_t r = 0; r < models.size(); ++r) {
      const OpPlan *mine = nullptr;
      for (const OpPlan &p : models[r]->plan().ops)
        if (p.op == op0.op)
          mine = &p;
      if (!mine)
        return makeError("op \"", op0.op,
                         "\" is planned on rank 0, not on rank ", r);
      if (mine->activation != g.activation || mine->output != g.output ||
          mine->signature.topology != g.topology)
        return makeError("op \"", op0.op, "\": rank ", r,
                         " plans other dtypes or another placement than "
                         "rank 0");
      // Each rank's slice is the trace's (Plan.cpp checks the stored shape
      // against it), and every rank reads the same hashed trace.
      g.plans.push_back(mine);
    }
    const std::vector<RankSlice> &traced = op0.signature.ranks;
    if (int64_t(traced.size()) == ranks)
      g.slices = traced;
    else if (traced.size() == 1 && !sliced)
      g.slices.assign(size_t(ranks), traced.front());
    else
      return makeError("op \"", op0.op, "\": the trace has ", traced.size(),
                       " rank slices for ", ranks, " ranks");
    opList.push_back(std::move(g));
  }
  return Status::ok();
}

Status TensorParallelGroup::loadReducedBiases(const std::string &dir,
                                              const LoadOptions &options) {
  const artifact::Manifest &man = models[0]->manifest();
  std::optional<artifact::ArtifactRoot> root;
  std::map<std::string, safetensors::SafetensorsFile> files;
  for (GroupOp &g : opList) {
    if (g.collective != Collective::AllReduceSum)
      continue;
    // The exporter stores a row-parallel bias once, unsuffixed, in its
    // biases shard (docs/kernel-abi.md); no rank's kernel adds it, so no
    // rank maps it. The (hashed) trace says whether the op has one
    // (topology "bias_after_reduce"); the manifest must agree.
    std::string name = biasTensorName(g.op, 0, /*rankSuffix=*/false);
    const artifact::TensorEntry *b = man.findTensor(name);
    bool traced = g.plans[0]->signature.biasAfterReduce;
    if (!b && traced)
      return makeError("op \"", g.op,
                       "\" is row-parallel and its trace adds a bias after "
                       "the all-reduce, but the manifest has no tensor \"",
                       name, "\"");
    if (b && !traced)
      return makeError("the manifest has \"", name,
                       "\", but the trace of "
                       "row-parallel op \"",
                       g.op, "\" adds no bias after the all-reduce");
    if (!b)
      continue;
    if (!b->plain())
      return makeError("bias \"", name, "\" of row-parallel op \"", g.op,
                       "\" is quantized, expected a plain tensor");
    if (b->plain()->shape != std::vector<int64_t>{g.n} ||
        !safetensors::isFloatDType(b->plain()->dtype))
      return makeError("bias \"", name, "\" is ",
                       safetensors::dtypeName(b->plain()->dtype), " ",
                       shapeToString(b->plain()->shape), ", expected a float [",
                       g.n, "]");
    auto shard = files.find(b->file);
    if (shard == files.end()) {
      const artifact::FileEntry *f = man.findFile(b->file);
      if (!f)
        return makeError("bias \"", name, "\" is in unlisted file ", b->file);
      if (!root) {
        auto r = artifact::ArtifactRoot::open(dir);
        if (!r)
          return r.error();
        root.emplace(r.take());
      }
      auto mapped = holdVerifiedFile(*root, *f, options);
      if (!mapped)
        return mapped.error();
      auto st = safetensors::SafetensorsFile::fromMappedFile(mapped.take(),
                                                             options.limits);
      if (!st)
        return st.error();
      QTENSOR_TRY(checkShardInventory(man, f->path, *st));
      groupMapped += f->bytes;
      noteList.push_back(
          std::string(options.access == FileAccess::Read ? "read" : "mapped") +
          " and hashed " + f->path +
          " for the biases added after the all-reduce");
      shard = files.emplace(b->file, st.take()).first;
    }
    std::string stored;
    for (const auto &[role, t] : b->storedTensors())
      if (std::strcmp(role, "data") == 0)
        stored = t.tensor;
    // checkShardInventory has matched it to the manifest's declaration.
    const safetensors::TensorView *v = shard->second.find(stored);
    if (!v)
      return makeError(shard->second.path(), ": tensor \"", stored,
                       "\" (bias \"", name, "\") is missing");
    QTENSOR_ASSIGN_OR_RETURN(g.reducedBiasValues, safetensors::toFloat64(*v));
    g.reducedBias = name;
  }
  return Status::ok();
}

const GroupOp *TensorParallelGroup::find(const std::string &name) const {
  std::string op = splitRankName(name).first;
  for (const GroupOp &g : opList)
    if (g.op == op)
      return &g;
  return nullptr;
}

Expected<GroupOutput> TensorParallelGroup::run(const GroupOp &op,
                                               const HostTensor &x) {
  if (x.dtype != op.activation || x.cols != op.k)
    return makeError("op \"", op.op, "\": activations are ",
                     qtensor::toString(x.dtype), " [", x.rows, ", ", x.cols,
                     "], the whole op reads ", qtensor::toString(op.activation),
                     " [T, ", op.k, "]");
  GroupOutput out;
  GroupCall call;
  call.op = op.op;
  call.tokens = x.rows;
  call.topology = op.topology;
  call.collective = describeCollective(op.collective, ranks);
  std::vector<Expected<std::vector<uint8_t>>> local;
  for (size_t i = 0; i < models.size(); ++i) {
    const OpPlan &mine = *op.plans[i];
    // A row-parallel rank reads its K slice; every other rank all of x.
    Expected<HostTensor> y = makeError("not run");
    if (op.collective == Collective::AllReduceSum) {
      auto slice = sliceColumns(x, mine.slice.kOffset, mine.slice.k);
      y = slice ? models[i]->run(mine.tensor, *slice)
                : Expected<HostTensor>(slice.error());
    } else {
      y = models[i]->run(mine.tensor, x);
    }
    if (!y) {
      local.push_back(makeError("op \"", mine.tensor, "\": ", y.message()));
      continue;
    }
    const DispatchRecord &record = models[i]->trace().all().back();
    if (!exchange) { // one process: no bytes to move
      call.ranks.push_back(record);
      out.parts.push_back(y.take());
      local.push_back(std::vector<uint8_t>());
      continue;
    }
    local.push_back(packOutput(*y, record));
  }
  QTENSOR_ASSIGN_OR_RETURN(std::vector<std::vector<uint8_t>> all,
                           everyRank(std::move(local)));
  if (exchange)
    for (size_t r = 0; r < all.size(); ++r) {
      QTENSOR_ASSIGN_OR_RETURN(auto part, unpackOutput(all[r], int64_t(r)));
      out.parts.push_back(std::move(part.first));
      call.ranks.push_back(std::move(part.second));
    }
  call.phase = call.ranks.front().phase;

  auto start = std::chrono::steady_clock::now();
  switch (op.collective) {
  case Collective::AllGather: {
    auto y = allGatherColumns(out.parts, op.slices, op.n);
    if (!y)
      return makeError("op \"", op.op, "\": ", y.message());
    out.y = y.take();
    break;
  }
  case Collective::AllReduceSum: {
    auto y = allReduceSum(out.parts, op.reducedBiasValues, op.output);
    if (!y)
      return makeError("op \"", op.op, "\": ", y.message());
    out.y = y.take();
    break;
  }
  case Collective::None: {
    Status same = checkReplicasAgree(out.parts);
    if (!same)
      return makeError("op \"", op.op, "\" is ", kernels::toString(op.topology),
                       " on every rank, but ", same.message());
    out.y = out.parts[0];
    break;
  }
  }
  call.combineSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  callList.push_back(std::move(call));
  return out;
}

Expected<std::vector<std::vector<double>>> TensorParallelGroup::everyRankValues(
    const GroupOp &op,
    Expected<std::vector<double>> (LoadedModel::*of)(const OpPlan &)
        const) const {
  std::vector<Expected<std::vector<uint8_t>>> local;
  for (size_t i = 0; i < models.size(); ++i) {
    auto part = ((*models[i]).*of)(*op.plans[i]);
    local.push_back(part ? Expected<std::vector<uint8_t>>(packDoubles(*part))
                         : Expected<std::vector<uint8_t>>(part.error()));
  }
  QTENSOR_ASSIGN_OR_RETURN(std::vector<std::vector<uint8_t>> all,
                           everyRank(std::move(local)));
  std::vector<std::vector<double>> values;
  for (size_t r = 0; r < all.size(); ++r) {
    QTENSOR_ASSIGN_OR_RETURN(std::vector<double> part,
                             unpackDoubles(all[r], int64_t(r)));
    values.push_back(std::move(part));
  }
  return values;
}

Expected<std::vector<double>>
TensorParallelGroup::referenceWeight(const GroupOp &op) const {
  return joinedWeight(op, &LoadedModel::referenceWeight);
}

Expected<std::vector<double>>
TensorParallelGroup::referenceMagnitudes(const GroupOp &op) const {
  return joinedWeight(op, &LoadedModel::referenceMagnitudes);
}

Expected<std::vector<double>> TensorParallelGroup::joinedWeight(
    const GroupOp &op,
    Expected<std::vector<double>> (LoadedModel::*of)(const OpPlan &)
        const) const {
  if (op.collective == Collective::None) { // every rank holds it whole
    auto w = ((*models[0]).*of)(*op.plans[0]);
    QTENSOR_TRY(agree(w ? Status::ok() : Status(w.error())));
    return w;
  }
  QTENSOR_ASSIGN_OR_RETURN(auto all, everyRankValues(op, of));
  if (std::all_of(all.begin(), all.end(),
                  [](const std::vector<double> &v) { return v.empty(); }))
    return std::vector<double>();
  std::vector<double> w(size_t(op.n) * size_t(op.k));
  for (size_t r = 0; r < all.size(); ++r) {
    const RankSlice &s = op.slices[r];
    const std::vector<double> &part = all[r];
    if (part.size() != size_t(s.n) * size_t(s.k) || s.nOffset + s.n > op.n ||
        s.kOffset + s.k > op.k)
      return makeError("op \"", op.op, "\": rank ", r, "'s reference slice [",
                       s.n, ", ", s.k, "] at (", s.nOffset, ", ", s.kOffset,
                       ") does not fit [", op.n, ", ", op.k, "]");
    for (int64_t i = 0; i < s.n; ++i)
      std::copy(part.begin() + i * s.k, part.begin() + (i + 1) * s.k,
                w.begin() + (s.nOffset + i) * op.k + s.kOffset);
  }
  return w;
}

Expected<std::vector<double>>
TensorParallelGroup::referenceBias(const GroupOp &op) const {
  if (op.collective == Collective::None) {
    auto b = models[0]->referenceBias(*op.plans[0]);
    QTENSOR_TRY(agree(b ? Status::ok() : Status(b.error())));
    return b;
  }
  if (op.collective == Collective::AllReduceSum)
    return op.reducedBiasValues;
  // Column slices: each rank's kernel adds its slice of the bias.
  QTENSOR_ASSIGN_OR_RETURN(auto all,
                           everyRankValues(op, &LoadedModel::referenceBias));
  std::vector<double> b;
  for (size_t r = 0; r < all.size(); ++r) {
    const RankSlice &s = op.slices[r];
    const std::vector<double> &part = all[r];
    if (part.empty() != !op.plans[0]->bias.has_value() ||
        (!part.empty() && part.size() != size_t(s.n)))
      return makeError("op \"", op.op, "\": rank ", r, "'s bias slice has ",
                       part.size(), " values, its slice has n = ", s.n);
    if (part.empty())
      continue;
    b.resize(size_t(op.n));
    std::copy(part.begin(), part.end(), b.begin() + s.nOffset);
  }
  return b;
}

Expected<KernelError> TensorParallelGroup::check(const GroupOp &op,
                                                 const HostTensor &x,
                                                 const HostTensor &y) const {
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> w, referenceWeight(op));
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> b, referenceBias(op));
  // Only a whole-K op may quantize its activations (the int8 kernel
  // admits no row-parallel split), and every rank then quantizes all of X.
  // A reduced op's ranks decode s q + m in one fma: |W_hat| serves there.
  if (op.collective != Collective::AllReduceSum) {
    QTENSOR_ASSIGN_OR_RETURN(std::vector<double> magnitudes,
                             referenceMagnitudes(op));
    return measureKernelError(
        op.plans.empty()
            ? x.toDoubles()
            : op.plans[0]->kernelActivations(x.toDoubles(), x.rows),
        w, b, y.toDoubles(), x.rows, op.n, op.k, op.output,
        magnitudes.empty() ? nullptr : &magnitudes);
  }
  return measureAllReduceError(x.toDoubles(), w, b, op.slices, y.toDoubles(),
                               x.rows, op.n, op.k, op.output);
}

nlohmann::ordered_json TensorParallelGroup::callsToJson() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const GroupCall &c : callList) {
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (size_t r = 0; r < c.ranks.size(); ++r)
      ranks.push_back({{"rank", r},
                       {"op", c.ranks[r].op},
                       {"kernel", c.ranks[r].kernel},
                       {"backend", c.ranks[r].backend},
                       {"seconds", c.ranks[r].seconds},
                       {"fallback", c.ranks[r].fallback}});
    out.push_back({{"op", c.op},
                   {"phase", kernels::toString(c.phase)},
                   {"T", c.tokens},
                   {"topology", kernels::toString(c.topology)},
                   {"collective", c.collective},
                   {"combine_seconds", c.combineSeconds},
                   {"ranks", std::move(ranks)}});
  }
  return out;
}

std::string TensorParallelGroup::callsToText() const {
  std::string out;
  char buf[64];
  for (const GroupCall &c : callList) {
    std::snprintf(buf, sizeof(buf), " %-7s T=%-5lld ",
                  kernels::toString(c.phase), (long long)c.tokens);
    out +=
        "  " + c.op + buf + kernels::toString(c.topology) + ": " + c.collective;
    std::snprintf(buf, sizeof(buf), " %.3f ms (ranks", c.combineSeconds * 1e3);
    out += buf;
    for (size_t r = 0; r < c.ranks.size(); ++r) {
      std::snprintf(buf, sizeof(buf), "%s %.3f", r ? "," : "",
                    c.ranks[r].seconds * 1e3);
      out += buf;
    }
    out += " ms)";
    for (const DispatchRecord &d : c.ranks)
      if (d.fallback) {
        out += " [FALLBACK]";
        break;
      }
    out += "\n";
  }
  return out;
}
