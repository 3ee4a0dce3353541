#include "io/collective.hpp"

#include <climits>
#include <vector>

namespace yee {
namespace io {

std::string broadcast(MPI_Comm comm, const std::string& s, int root) {
  int len = int(s.size());
  MPI_Bcast(&len, 1, MPI_INT, root, comm);
  std::vector<char> buf(s.begin(), s.end());
  buf.resize(std::size_t(len));
  if (len > 0) MPI_Bcast(buf.data(), len, MPI_CHAR, root, comm);
  return std::string(buf.begin(), buf.end());
}

std::string first_error(MPI_Comm comm, const std::string& err) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int first = err.empty() ? INT_MAX : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return "";
  const std::string msg = broadcast(comm, err, first);
  return size > 1 ? "rank " + std::to_string(first) + ": " + msg : msg;
}

}  // namespace io
}  // namespace yee
