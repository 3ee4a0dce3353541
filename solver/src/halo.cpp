#include "halo.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_Query_cuda_support
#endif

namespace yee {
namespace {
// Whether this MPI library can take device pointers (Open MPI's and MPICH's own queries;
// other libraries: no).
bool mpi_reports_cuda_support() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int yes = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) == MPI_SUCCESS && yes;
#else
  return false;
#endif
}
// Tangential components of the face normal to `axis`.
constexpr int kTangentE[3][2] = {{kEy, kEz}, {kEx, kEz}, {kEx, kEy}};
constexpr int kTangentH[3][2] = {{kHy, kHz}, {kHx, kHz}, {kHx, kHy}};
template <typename T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
}  // namespace

template <typename T>
Halo<T>::Halo(MPI_Comm cart, const Fields<T>& f, const std::string& cuda_aware)
    : cart_(cart), type_(mpi_type<T>()) {
  on_device_ = kernels::messages_on_device();
  if (on_device_) {
    int direct = cuda_aware == "on" || (cuda_aware == "auto" && mpi_reports_cuda_support());
    MPI_Allreduce(MPI_IN_PLACE, &direct, 1, MPI_INT, MPI_MIN, cart_);  // one path for all ranks
    staged_ = !direct;
  }
  for (int a = 0; a < 3; ++a) {
    MPI_Cart_shift(cart_, a, 1, &lower_[a], &upper_[a]);
    cap_[a] = std::size_t(f.n[a == 0 ? 1 : 0]) * std::size_t(f.n[a == 2 ? 1 : 2]) * 2;
    send_[a] = static_cast<T*>(kernels::alloc_message(cap_[a] * sizeof(T)));
    recv_[a] = static_cast<T*>(kernels::alloc_message(cap_[a] * sizeof(T)));
    if (staged_) {
      hsend_[a].assign(cap_[a], T(0));
      hrecv_[a].assign(cap_[a], T(0));
    }
  }
}

template <typename T>
Halo<T>::~Halo() {
  for (int a = 0; a < 3; ++a) {
    kernels::free_message(send_[a]);
    kernels::free_message(recv_[a]);
  }
}

template <typename T>
void Halo<T>::to_mpi(int a, std::size_t count) {
  if (staged_) kernels::message_to_host(hsend_[a].data(), send_[a], count * sizeof(T));
}

template <typename T>
void Halo<T>::from_mpi(int a, std::size_t count) {
  if (staged_) kernels::message_from_host(recv_[a], hrecv_[a].data(), count * sizeof(T));
}

// Pre-posts the receives of one exchange: E comes from the upper neighbour, H from the lower.
template <typename T>
void Halo<T>::post(bool e_down) {
  reqs_.clear();
  for (int a = 0; a < 3; ++a) {
    const int from = e_down ? upper_[a] : lower_[a];
    if (from == MPI_PROC_NULL) continue;
    reqs_.emplace_back();
    MPI_Irecv(mpi_recv(a), int(cap_[a]), type_, from, a, cart_, &reqs_.back());
  }
}

template <typename T>
void Halo<T>::finish(Fields<T>& f, bool e_down) {
  const auto& comps = e_down ? kTangentE : kTangentH;
  for (int a = 0; a < 3; ++a) {
    const int to = e_down ? lower_[a] : upper_[a];
    if (to == MPI_PROC_NULL) continue;
    const long layer = e_down ? 1 : f.n[a];
    const std::size_t count = kernels::pack(f, a, layer, comps[a][0], comps[a][1], send_[a]);
    to_mpi(a, count);
    reqs_.emplace_back();
    MPI_Isend(mpi_send(a), int(count), type_, to, a, cart_, &reqs_.back());
    bytes_ += double(count) * sizeof(T);
    ++messages_;
  }
  MPI_Waitall(int(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  reqs_.clear();
  for (int a = 0; a < 3; ++a) {
    const int from = e_down ? upper_[a] : lower_[a];
    if (from == MPI_PROC_NULL) continue;
    const long ghost = e_down ? f.n[a] + 1 : 0;
    from_mpi(a, cap_[a]);
    kernels::unpack(f, a, ghost, comps[a][0], comps[a][1], recv_[a]);
  }
}

template <typename T>
void Halo<T>::exchange_e_up(Fields<T>& f) {
  reqs_.clear();
  for (int a = 0; a < 3; ++a) {
    if (lower_[a] == MPI_PROC_NULL) continue;
    reqs_.emplace_back();
    MPI_Irecv(mpi_recv(a), int(cap_[a]), type_, lower_[a], 3 + a, cart_, &reqs_.back());
  }
  for (int a = 0; a < 3; ++a) {
    if (upper_[a] == MPI_PROC_NULL) continue;
    // div E needs the normal component at index-1, so that is the one sent here.
    const std::size_t count = kernels::pack(f, a, f.n[a], a, a, send_[a]);
    to_mpi(a, count);
    reqs_.emplace_back();
    MPI_Isend(mpi_send(a), int(count), type_, upper_[a], 3 + a, cart_, &reqs_.back());
  }
  MPI_Waitall(int(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  reqs_.clear();
  for (int a = 0; a < 3; ++a)
    if (lower_[a] != MPI_PROC_NULL) {
      from_mpi(a, cap_[a]);
      kernels::unpack(f, a, 0, a, a, recv_[a]);
    }
}

// Along x, `depth` whole planes (ghost rows and row padding included) are one contiguous
// run of each component array, so they travel straight from and into the fields with no
// packing: two memory copies of the halo fewer. The j and k ghosts they carry are either
// walls (zero on both ranks) or overwritten by the y and z exchanges that follow.
template <typename T>
void Halo<T>::exchange_planes(Fields<T>& f, long depth) {
  const int nb[2] = {lower_[0], upper_[0]};
  const long row0 = f.at(0, 1 - f.ghost[1], 1 - f.ghost[2]);  // where plane 0 starts
  const long send_plane[2] = {1, f.n[0] + 1 - depth}, recv_plane[2] = {1 - depth, f.n[0] + 1};
  const std::size_t count = std::size_t(depth) * std::size_t(f.sx);
  reqs_.clear();
  for (int s = 0; s < 2; ++s) {  // tag 30+c travels up, 40+c down
    if (nb[s] == MPI_PROC_NULL) continue;
    for (int c = 0; c < 6; ++c) {
      reqs_.emplace_back();
      MPI_Irecv(f.comp[c] + row0 + recv_plane[s] * f.sx, int(count), type_, nb[s], (s == 0 ? 30 : 40) + c, cart_,
                &reqs_.back());
    }
  }
  for (int s = 0; s < 2; ++s) {
    if (nb[s] == MPI_PROC_NULL) continue;
    for (int c = 0; c < 6; ++c) {
      reqs_.emplace_back();
      MPI_Isend(f.comp[c] + row0 + send_plane[s] * f.sx, int(count), type_, nb[s], (s == 0 ? 40 : 30) + c, cart_,
                &reqs_.back());
      bytes_ += double(count) * sizeof(T);
      ++messages_;
    }
  }
  MPI_Waitall(int(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  reqs_.clear();
}

template <typename T>
void Halo<T>::exchange_deep(Fields<T>& f, long depth) {
  for (int a = 0; a < 3; ++a) {
    const int nb[2] = {lower_[a], upper_[a]};
    if (nb[0] == MPI_PROC_NULL && nb[1] == MPI_PROC_NULL) continue;
    if (a == 0 && !on_device_) {
      exchange_planes(f, depth);
      continue;
    }
    Box base;
    for (int b = 0; b < 3; ++b) {  // earlier axes with neighbours: their ghosts are filled by now
      const long grown = b < a && (lower_[b] != MPI_PROC_NULL || upper_[b] != MPI_PROC_NULL) ? depth : 0;
      base.lo[b] = 1 - grown;
      base.hi[b] = f.n[b] + 1 + grown;
    }
    Box send[2] = {base, base}, recv[2] = {base, base};
    send[0].lo[a] = 1, send[0].hi[a] = 1 + depth;                  // lowest owned layers -> lower
    send[1].lo[a] = f.n[a] + 1 - depth, send[1].hi[a] = f.n[a] + 1;  // highest owned layers -> upper
    recv[0].lo[a] = 1 - depth, recv[0].hi[a] = 1;
    recv[1].lo[a] = f.n[a] + 1, recv[1].hi[a] = f.n[a] + 1 + depth;
    std::size_t count = 6;
    for (int b = 0; b < 3; ++b) count *= std::size_t(send[0].hi[b] - send[0].lo[b]);
    reqs_.clear();
    for (int s = 0; s < 2; ++s) {  // tag 10+a travels up, 20+a down
      if (nb[s] == MPI_PROC_NULL) continue;
      deep_recv_[s].resize(count);
      reqs_.emplace_back();
      MPI_Irecv(deep_recv_[s].data(), int(count), type_, nb[s], s == 0 ? 10 + a : 20 + a, cart_, &reqs_.back());
    }
    for (int s = 0; s < 2; ++s) {
      if (nb[s] == MPI_PROC_NULL) continue;
      deep_send_[s].resize(count);
      kernels::pack_box(f, send[s], deep_send_[s].data());
      reqs_.emplace_back();
      MPI_Isend(deep_send_[s].data(), int(count), type_, nb[s], s == 0 ? 20 + a : 10 + a, cart_, &reqs_.back());
      bytes_ += double(count) * sizeof(T);
      ++messages_;
    }
    MPI_Waitall(int(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
    reqs_.clear();
    for (int s = 0; s < 2; ++s)
      if (nb[s] != MPI_PROC_NULL) kernels::unpack_box(f, recv[s], deep_recv_[s].data());
  }
}

template class Halo<float>;
template class Halo<double>;

}  // namespace yee
