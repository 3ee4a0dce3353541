#include "halo.hpp"

namespace yee {
namespace {
// Tangential components of the face normal to `axis`.
constexpr int kTangentE[3][2] = {{kEy, kEz}, {kEx, kEz}, {kEx, kEy}};
constexpr int kTangentH[3][2] = {{kHy, kHz}, {kHx, kHz}, {kHx, kHy}};
template <typename T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
}  // namespace

template <typename T>
Halo<T>::Halo(MPI_Comm cart, const Fields<T>& f) : cart_(cart), type_(mpi_type<T>()) {
  for (int a = 0; a < 3; ++a) {
    MPI_Cart_shift(cart_, a, 1, &lower_[a], &upper_[a]);
    const std::size_t face = std::size_t(f.n[a == 0 ? 1 : 0]) * std::size_t(f.n[a == 2 ? 1 : 2]) * 2;
    send_[a].assign(face, T(0));
    recv_[a].assign(face, T(0));
  }
}

// Pre-posts the receives of one exchange: E comes from the upper neighbour, H from the lower.
template <typename T>
void Halo<T>::post(bool e_down) {
  reqs_.clear();
  for (int a = 0; a < 3; ++a) {
    const int from = e_down ? upper_[a] : lower_[a];
    if (from == MPI_PROC_NULL) continue;
    reqs_.emplace_back();
    MPI_Irecv(recv_[a].data(), int(recv_[a].size()), type_, from, a, cart_, &reqs_.back());
  }
}

template <typename T>
void Halo<T>::finish(Fields<T>& f, bool e_down) {
  const auto& comps = e_down ? kTangentE : kTangentH;
  for (int a = 0; a < 3; ++a) {
    const int to = e_down ? lower_[a] : upper_[a];
    if (to == MPI_PROC_NULL) continue;
    const long layer = e_down ? 1 : f.n[a];
    const std::size_t count = kernels::pack(f, a, layer, comps[a][0], comps[a][1], send_[a].data());
    reqs_.emplace_back();
    MPI_Isend(send_[a].data(), int(count), type_, to, a, cart_, &reqs_.back());
    bytes_ += double(count) * sizeof(T);
  }
  MPI_Waitall(int(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  reqs_.clear();
  for (int a = 0; a < 3; ++a) {
    const int from = e_down ? upper_[a] : lower_[a];
    if (from == MPI_PROC_NULL) continue;
    const long ghost = e_down ? f.n[a] + 1 : 0;
    kernels::unpack(f, a, ghost, comps[a][0], comps[a][1], recv_[a].data());
  }
}

template <typename T>
void Halo<T>::exchange_e_up(Fields<T>& f) {
  reqs_.clear();
  for (int a = 0; a < 3; ++a) {
    if (lower_[a] == MPI_PROC_NULL) continue;
    reqs_.emplace_back();
    MPI_Irecv(recv_[a].data(), int(recv_[a].size()), type_, lower_[a], 3 + a, cart_, &reqs_.back());
  }
  for (int a = 0; a < 3; ++a) {
    if (upper_[a] == MPI_PROC_NULL) continue;
    // div E needs the normal component at index-1, so that is the one sent here.
    const std::size_t count = kernels::pack(f, a, f.n[a], a, a, send_[a].data());
    reqs_.emplace_back();
    MPI_Isend(send_[a].data(), int(count), type_, upper_[a], 3 + a, cart_, &reqs_.back());
  }
  MPI_Waitall(int(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  reqs_.clear();
  for (int a = 0; a < 3; ++a)
    if (lower_[a] != MPI_PROC_NULL) kernels::unpack(f, a, 0, a, a, recv_[a].data());
}

template class Halo<float>;
template class Halo<double>;

}  // namespace yee
