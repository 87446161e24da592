//===- TensorParallel.h - Every rank of a tp artifact at once ---*- C++ -*-===//
//
// A tensor-parallel artifact (`qtc compile --tp N`) stores one shard per
// rank; loadModel loads one rank, and a row-parallel rank's output is a
// partial sum. TensorParallelGroup loads every rank in this process and
// does, on the host, what the collectives of a real deployment do between
// processes (docs/runtime.md):
//
//   column-parallel (N sliced)  each rank runs the whole x; all_gather:
//                               rank r's [T, n_r] lands in columns
//                               [n_offset_r, n_offset_r + n_r) of [T, N]
//   row-parallel (K sliced)     rank r runs x[:, k_offset_r : +k_r];
//                               all_reduce(sum): the partials, each already
//                               rounded to the output dtype by its kernel,
//                               summed in f32, the bias (stored once, in the
//                               biases shard) added after the reduction, the
//                               result rounded once to the output dtype
//   replicated / single         every rank runs it; rank 0's output, and
//                               every other rank's must be bit-identical
//
// loadRank runs one rank in this process and the others in theirs
// (`mpirun -np N qtc run ART --rank mpi`): the ranks' outputs cross process
// boundaries through a RankExchange (MPI), and the joins are the same
// functions on the gathered parts, so the result is bit for bit the
// in-process group's, which stays as the test oracle. The sum is in rank
// order on every rank (an all_gather, then the sum), not in the order an
// MPI_Allreduce would pick. The error bound below holds for any order of an f32 sum with the
// bias added before the single rounding; it does not bound a reduction that
// accumulates in the output dtype (an f16/bf16 NCCL ring rounds R - 1
// times) or adds the bias after a rounded all-reduce.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_TENSORPARALLEL_H
#define QTENSOR_RUNTIME_TENSORPARALLEL_H

#include "qtensor/Runtime/Loader.h"
#include "qtensor/Runtime/RankExchange.h"
#include "qtensor/Runtime/Reference.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::runtime {

/// What joins the ranks' outputs of one op.
enum class Collective : uint8_t { None, AllGather, AllReduceSum };
Collective collectiveFor(kernels::Topology topology, int64_t ranks);
/// "all_gather(2 ranks)", "all_reduce(sum, 2 ranks)", "none (2 ranks,
/// identical)" for a replicated op, "none" for one rank.
std::string describeCollective(Collective c, int64_t ranks);

/// Columns [from, from + count) of x, bytes copied (no rounding): the K
/// slice a row-parallel rank reads.
Expected<HostTensor> sliceColumns(const HostTensor &x, int64_t from,
                                  int64_t count);

/// all_gather of column-parallel outputs: parts[r] is [T, slices[r].n] and
/// goes to columns [slices[r].nOffset, +n) of the [T, n] result. The slices
/// must tile [0, n) exactly; every part must have the same T and dtype.
Expected<HostTensor>
allGatherColumns(const std::vector<HostTensor> &parts,
                 const std::vector<kernels::RankSlice> &slices, int64_t n);

/// all_reduce(sum) of row-parallel partials, each [T, N] in `output`: the
/// sum in f32 (rank order), then `bias` ([N] in float64, empty for none)
/// converted to f32 and added after the reduction, then one rounding to
/// `output`.
Expected<HostTensor> allReduceSum(const std::vector<HostTensor> &parts,
                                  const std::vector<double> &bias,
                                  FloatType output);

/// A replicated op's outputs, one per rank: each must be bit-identical to
/// rank 0's (same kernel, same bytes); the error names the first rank and
/// element that differs.
Status checkReplicasAgree(const std::vector<HostTensor> &parts);

/// One rank's share of one combined row-parallel output: sum_k |x_k w_k|
/// and the float64 partial sum over its K slice of `k` terms.
struct PartialTerm {
  double absSum = 0, ref = 0;
  int64_t k = 0;
};

/// The largest |y - y_ref| allReduceSum's result may show for one output
/// of reference `yRef` (= sum_r ref_r + bias). With e_r =
/// kernelErrorBound(absSum_r, ref_r, k_r, output) -- each partial's f32
/// accumulation and its rounding to `output` by its kernel -- and
/// u, gamma, u_out, 2^-25 as in kernelErrorBound:
///  - the R partials and the bias are R + 1 terms summed in f32 in any
///    order: gamma(R) (sum_r |y_r| + |b|), |y_r| <= |ref_r| + e_r; the
///    bias's conversion to f32 (exact from f16, bf16, f32) adds at most
///    u |b|; together within gamma(R + 1) (sum_r (|ref_r| + e_r) + |b|) = c;
///  - the final rounding to `output` adds u_out (|yRef| + sum_r e_r + c),
///    plus 2^-25 for f16 underflow.
/// Total: sum_r e_r + c + u_out (|yRef| + sum_r e_r + c) [+ 2^-25]. The
/// sum_r u_out |ref_r| inside e_r is the price of rounding the partials
/// before the reduction: when they cancel it dwarfs u_out |yRef|.
double allReduceErrorBound(const std::vector<PartialTerm> &ranks, double bias,
                           double yRef, FloatType output);

/// A combined row-parallel output against the float64 reference of the
/// whole weight `w` [N, K] (and `bias`, [N] or empty), elementwise, against
/// allReduceErrorBound with each rank's terms from its K slice.
KernelError measureAllReduceError(const std::vector<double> &x,
                                  const std::vector<double> &w,
                                  const std::vector<double> &bias,
                                  const std::vector<kernels::RankSlice> &slices,
                                  const std::vector<double> &y, int64_t t,
                                  int64_t n, int64_t k, FloatType output);

/// One op across the group.
struct GroupOp {
  std::string op; ///< the trace's op name (no @rank suffix)
  kernels::Topology topology = kernels::Topology::Single;
  Collective collective = Collective::None;
  int64_t n = 0, k = 0; ///< the whole weight
  FloatType activation = FloatType::F16;
  FloatType output = FloatType::F16;
  /// The plan of the op on each rank this process runs (every rank runs
  /// every op): all ranks in one process, this process's one otherwise.
  std::vector<const OpPlan *> plans;
  /// Every rank's slice, in rank order (the trace's).
  std::vector<kernels::RankSlice> slices;
  /// Row-parallel with a bias: the plain tensor "<p>.bias" the exporter
  /// stores once, added after the all-reduce, and its values.
  std::optional<std::string> reducedBias;
  std::vector<double> reducedBiasValues;
};

/// One call of an op across the group: what each rank ran, and the
/// collective that joined them.
struct GroupCall {
  std::string op;
  kernels::Phase phase = kernels::Phase::Decode;
  int64_t tokens = 0;
  kernels::Topology topology = kernels::Topology::Single;
  std::string collective;            ///< describeCollective
  std::vector<DispatchRecord> ranks; ///< one per rank, in rank order
  double combineSeconds = 0;
};

/// A combined output and the ranks' own outputs.
struct GroupOutput {
  HostTensor y;                  ///< [T, N] in the op's output dtype
  std::vector<HostTensor> parts; ///< per rank, as its kernel wrote it
};

class TensorParallelGroup {
public:
  /// Loads every rank of the artifact in `dir` with `options` (its `rank`
  /// is ignored; `ops` may name an op with or without its @rank suffix).
  /// A failure names the rank and the loader's error (its file, tensor or
  /// field).
  static Expected<std::unique_ptr<TensorParallelGroup>>
  load(const std::string &dir, LoadOptions options);
  /// Loads the rank `exchange` says this process is, and joins with the
  /// other ranks' processes through it. The exchange must outlive the
  /// group; every process must make the same calls in the same order.
  static Expected<std::unique_ptr<TensorParallelGroup>>
  loadRank(const std::string &dir, LoadOptions options, RankExchange &exchange);

  int64_t tp() const { return ranks; }
  /// The ranks this process runs: all of them, or its own.
  int64_t localRanks() const { return int64_t(models.size()); }
  int64_t firstLocalRank() const { return firstLocal; }
  /// A rank this process runs (r in [firstLocalRank, + localRanks)).
  const LoadedModel &rank(int64_t r) const {
    return *models[size_t(r - firstLocal)];
  }
  /// How the ranks' outputs are joined: "in process", or the exchange's.
  std::string transport() const;
  /// `local` (a result only this process computed) as every rank's
  /// verdict: an error on any rank is an error on all of them ("rank R:
  /// ..."), so that no rank goes on to a collective the others left (with
  /// MPI, a rank that failed alone calls this where the others call their
  /// next collective). `local` itself in one process.
  Status agree(Status local) const;
  const std::vector<GroupOp> &ops() const { return opList; }
  /// By trace op name, or any rank's manifest tensor name.
  const GroupOp *find(const std::string &name) const;
  /// Bytes the group mapped and hashed itself (the shard holding the
  /// row-parallel biases), beyond the ranks' own mappings.
  uint64_t mappedBytes() const { return groupMapped; }
  const std::vector<std::string> &notes() const { return noteList; }
  const std::vector<GroupCall> &calls() const { return callList; }

  /// Runs `op` on every rank and combines (see above); x is [T, K] of the
  /// whole weight, in the op's activation dtype.
  Expected<GroupOutput> run(const GroupOp &op, const HostTensor &x);

  /// The whole W_hat [N, K] in float64, assembled from the ranks' stored
  /// slices (the artifact holds nothing else), and the whole bias [N]
  /// (empty when none).
  Expected<std::vector<double>> referenceWeight(const GroupOp &op) const;
  Expected<std::vector<double>> referenceBias(const GroupOp &op) const;
  /// W_hat's rounding magnitudes, assembled the same way; empty where they
  /// are |W_hat| (LoadedModel::referenceMagnitudes).
  Expected<std::vector<double>> referenceMagnitudes(const GroupOp &op) const;
  /// A combined output against the float64 reference of the whole weight:
  /// kernelErrorBound for gathered and replicated ops (each output is one
  /// kernel's, over the whole K), allReduceErrorBound for reduced ones.
  Expected<KernelError> check(const GroupOp &op, const HostTensor &x,
                              const HostTensor &y) const;

  nlohmann::ordered_json callsToJson() const;
  /// One line per call: "op  phase T=3  all_reduce(sum, 2 ranks)  0.004 ms
  /// (ranks 1.201, 1.187 ms)".
  std::string callsToText() const;

private:
  TensorParallelGroup() = default;
  Status collectOps();
  Status loadReducedBiases(const std::string &dir, const LoadOptions &options);

  /// Every rank's `local` (this process's ranks' values, in rank order)
  /// in rank order: the values themselves in one process, gathered through
  /// the exchange otherwise.
  Expected<std::vector<std::vector<uint8_t>>>
  everyRank(std::vector<Expected<std::vector<uint8_t>>> local) const;
  /// Every rank's values of `op` from `of` (its reference weight or bias
  /// slice), in rank order, through everyRank.
  Expected<std::vector<std::vector<double>>> everyRankValues(
      const GroupOp &op,
      Expected<std::vector<double>> (LoadedModel::*of)(const OpPlan &)
          const) const;
  /// The whole [N, K] of a per-rank weight slice from `of` (W_hat or its
  /// magnitudes); empty when every rank's is.
  Expected<std::vector<double>>
  joinedWeight(const GroupOp &op,
               Expected<std::vector<double>> (LoadedModel::*of)(const OpPlan &)
                   const) const;
  /// What every rank must plan identically: op names, shapes, placements.
  std::string planFingerprint() const;

  std::vector<std::unique_ptr<LoadedModel>> models;
  int64_t firstLocal = 0, ranks = 1;
  RankExchange *exchange = nullptr;
  std::vector<GroupOp> opList;
  std::vector<GroupCall> callList;
  std::vector<std::string> noteList;
  uint64_t groupMapped = 0;
};

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_TENSORPARALLEL_H
