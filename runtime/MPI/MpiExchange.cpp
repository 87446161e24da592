//===- MpiExchange.cpp - RankExchange over MPI ----------------------------===//
//
// An all_gather of variable-sized byte strings as MPI does it: one
// MPI_Allgather of each rank's status and size, then one MPI_Allgatherv of
// the payloads (a failing rank's payload is its message). MPI errors are
// returned (MPI_ERRORS_RETURN), not fatal, and reported with
// MPI_Error_string.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Runtime/RankExchange.h"

#include <mpi.h>

#include <climits>
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
    std::vector<int> counts(static_cast<size_t>(count)),
        offsets(static_cast<size_t>(count));
    uint64_t total = 0;
    for (int64_t r = 0; r < count; ++r) {
      uint64_t n = headers[size_t(r) * 2 + 1];
      if (n > uint64_t(INT_MAX) || total + n > uint64_t(INT_MAX))
        return makeError("all_gather of ", n, " bytes from rank ", r,
                         ": above the 2 GiB one MPI_Allgatherv moves");
      counts[size_t(r)] = int(n);
      offsets[size_t(r)] = int(total);
      total += n;
    }
    std::vector<uint8_t> all(static_cast<size_t>(total));
    const uint8_t *send =
        local ? local->data()
              : reinterpret_cast<const uint8_t *>(message.data());
    code = MPI_Allgatherv(send, int(bytes), MPI_BYTE, all.data(), counts.data(),
                          offsets.data(), MPI_BYTE, MPI_COMM_WORLD);
    if (code != MPI_SUCCESS)
      return makeError("MPI_Allgatherv: ", mpiError(code));
    std::vector<std::vector<uint8_t>> out;
    for (int64_t r = 0; r < count; ++r) {
      const uint8_t *p = all.data() + offsets[size_t(r)];
      if (headers[size_t(r) * 2] != 0)
        return makeError("rank ", r, ": ",
                         std::string(reinterpret_cast<const char *>(p),
                                     size_t(counts[size_t(r)])));
      out.emplace_back(p, p + counts[size_t(r)]);
    }
    return out;
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
