//===- MpiExchange.cpp - RankExchange over MPI ----------------------------===//
//
// An all_gather of variable-sized byte strings as MPI does it: one
// MPI_Allgather of each rank's status and size, then MPI_Allgatherv of the
// payloads, in rounds that keep its int counts in range (a failing rank's
// payload is its message). MPI errors are
// returned (MPI_ERRORS_RETURN), not fatal, and reported with
// MPI_Error_string.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Runtime/RankExchange.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace qtensor::runtime {
namespace {

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, size_t(length));
}

class MpiExchange final : public RankExchange {
public:
  static Expected<std::unique_ptr<RankExchange>> open() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    bool ours = false;
    if (!initialized) {
      int provided = 0;
      int code =
          MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      if (code != MPI_SUCCESS)
        return makeError("MPI_Init_thread failed: ", mpiError(code));
      ours = true;
      // The host kernels run on a thread pool; only the main thread calls
      // MPI, which is what FUNNELED promises.
      if (provided < MPI_THREAD_FUNNELED) {
        MPI_Finalize();
        return makeError("the MPI library provides thread level ", provided,
                         ", below MPI_THREAD_FUNNELED, which qtc's threaded "
                         "kernels need");
      }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    std::unique_ptr<MpiExchange> x(new MpiExchange());
    x->ours = ours;
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    x->me = rank;
    x->count = size;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    std::string v(version, size_t(length));
    x->library = v.substr(0, v.find_first_of(",\n"));
    return std::unique_ptr<RankExchange>(std::move(x));
  }

  ~MpiExchange() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (ours && !finalized)
      MPI_Finalize();
  }

  int64_t rank() const override { return me; }
  int64_t size() const override { return count; }
  std::string describe() const override {
    return "MPI (" + library + ", " + std::to_string(count) + " processes)";
  }

  Expected<std::vector<std::vector<uint8_t>>>
  allGather(const Expected<std::vector<uint8_t>> &local) override {
    // Each rank's status (0 ok, 1 failed) and payload size.
    std::string message = local ? std::string() : local.message();
    const uint64_t bytes = local ? local->size() : message.size();
    uint64_t header[2] = {local ? 0u : 1u, bytes};
    std::vector<uint64_t> headers(size_t(count) * 2);
    int code = MPI_Allgather(header, 2, MPI_UINT64_T, headers.data(), 2,
                             MPI_UINT64_T, MPI_COMM_WORLD);
    if (code != MPI_SUCCESS)
      return makeError("MPI_Allgather (sizes): ", mpiError(code));
    // MPI_Allgatherv counts and offsets are ints: payloads move in rounds
    // of at most INT_MAX / ranks bytes from each rank, so that a round's
    // offsets fit (a whole f64 reference weight for --check can be GBs).
    const uint64_t chunk = uint64_t(INT_MAX) / uint64_t(count);
    uint64_t longest = 0;
    for (int64_t r = 0; r < count; ++r)
      longest = std::max(longest, headers[size_t(r) * 2 + 1]);
    std::vector<std::vector<uint8_t>> parts(static_cast<size_t>(count));
    for (int64_t r = 0; r < count; ++r)
      parts[size_t(r)].reserve(size_t(headers[size_t(r) * 2 + 1]));
    const uint8_t *send =
        local ? local->data()
              : reinterpret_cast<const uint8_t *>(message.data());
    std::vector<int> counts(static_cast<size_t>(count)),
        offsets(static_cast<size_t>(count));
    std::vector<uint8_t> round;
    for (uint64_t at = 0; at == 0 || at < longest; at += chunk) {
      uint64_t total = 0;
      for (int64_t r = 0; r < count; ++r) {
        uint64_t n = headers[size_t(r) * 2 + 1];
        uint64_t piece = n > at ? std::min(chunk, n - at) : 0;
        counts[size_t(r)] = int(piece);
        offsets[size_t(r)] = int(total);
        total += piece;
      }
      round.resize(size_t(total));
      code = MPI_Allgatherv(send + std::min(at, bytes), counts[size_t(me)],
                            MPI_BYTE, round.data(), counts.data(),
                            offsets.data(), MPI_BYTE, MPI_COMM_WORLD);
      if (code != MPI_SUCCESS)
        return makeError("MPI_Allgatherv: ", mpiError(code));
      for (int64_t r = 0; r < count; ++r) {
        const uint8_t *p = round.data() + offsets[size_t(r)];
        parts[size_t(r)].insert(parts[size_t(r)].end(), p,
                                p + counts[size_t(r)]);
      }
    }
    for (int64_t r = 0; r < count; ++r)
      if (headers[size_t(r) * 2] != 0)
        return makeError(
            "rank ", r, ": ",
            std::string(parts[size_t(r)].begin(), parts[size_t(r)].end()));
    return parts;
  }

  [[noreturn]] void abort(int status) override {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status); // MPI_Abort does not return; if it did, still end
  }

private:
  MpiExchange() = default;
  bool ours = false;
  int64_t me = 0, count = 1;
  std::string library;
};

} // namespace

Expected<std::unique_ptr<RankExchange>> openMpiExchange() {
  return MpiExchange::open();
}

} // namespace qtensor::runtime
