//===- RankExchange.h - Moving bytes between the ranks' processes -*- C++ -*-===//
//
// A tensor-parallel artifact run with one process per rank
// (TensorParallelGroup::loadRank, `mpirun -np N qtc run ART --rank mpi`)
// joins the ranks' outputs with collectives between processes. This is the
// one operation the group needs from the transport: an all_gather of
// variable-sized byte strings. The joins themselves (the column gather, the
// rank-ordered f32 sum of an all_reduce, the replica check) are computed
// from the gathered parts by the same functions the in-process group uses,
// so one process per rank gives bit for bit what one process with every
// rank gives.
//
// A rank that fails (a load error, a kernel error) still takes part in the
// next all_gather, with its error: the call then fails on every rank,
// naming that rank and its message, so that no rank waits forever for one
// that stopped.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_RANKEXCHANGE_H
#define QTENSOR_RUNTIME_RANKEXCHANGE_H

#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace qtensor::runtime {

class RankExchange {
public:
  virtual ~RankExchange();
  /// This process's rank, and how many there are.
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  /// "MPI (Open MPI v4.1.4, 2 processes)".
  virtual std::string describe() const = 0;
  /// Every rank's `local`, in rank order, on every rank; an error when any
  /// rank's `local` is one ("rank R: MESSAGE") or the transport fails.
  virtual Expected<std::vector<std::vector<uint8_t>>>
  allGather(const Expected<std::vector<uint8_t>> &local) = 0;
  /// Ends every rank's process with `status` (MPI_Abort): for a failure
  /// only this rank saw outside a collective, after which the others
  /// would wait for it in the next one.
  [[noreturn]] virtual void abort(int status) = 0;
};

/// MPI_COMM_WORLD as a RankExchange (QTensorMPI, built where MPI is
/// found): initializes MPI unless it is already, and finalizes it when
/// destroyed if it initialized it.
Expected<std::unique_ptr<RankExchange>> openMpiExchange();

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_RANKEXCHANGE_H
