#pragma once
// Halo exchange on the Cartesian communicator. Only the two field components tangential
// to a face cross it: H travels up (the E update reads H at index-1), E travels down
// (the H update reads E at index+1). Receives are posted before the update that
// precedes the exchange; packing goes through the kernel contract.
// Message buffers live in the backend's memory (device memory for the CUDA backend);
// MPI reads them directly (host memory, or CUDA-aware MPI) or through host copies.
#include <mpi.h>

#include <string>
#include <vector>

#include "kernel_contract.hpp"
#include "time_block.hpp"

namespace yee {

template <typename T>
class Halo {
 public:
  // cuda_aware: auto | on | off, how device-resident messages reach MPI (ignored when
  // the backend's messages are in host memory). auto asks the MPI library, agreed by all ranks.
  Halo(MPI_Comm cart, const Fields<T>& f, const std::string& cuda_aware = "off");
  ~Halo();
  Halo(const Halo&) = delete;
  Halo& operator=(const Halo&) = delete;
  // H: owned top layer -> upper neighbour's low ghost.
  void post_h() { post(false); }
  void finish_h(Fields<T>& f) { finish(f, false); }
  // E: owned bottom layer -> lower neighbour's high ghost.
  void post_e() { post(true); }
  void finish_e(Fields<T>& f) { finish(f, true); }
  // Wavefront kernel: all six components, `depth` layers on every face toward a neighbour,
  // both ways; axis by axis, each axis's messages carrying the ghosts filled along the
  // axes before it, so edge and corner ghosts arrive too. Blocking; depth <= ghost[axis]
  // on every axis with a neighbour.
  void exchange_deep(Fields<T>& f, long depth);
  // Normal E component upwards (only for div E, which reads E at index-1).
  void exchange_e_up(Fields<T>& f);
  double bytes_sent() const { return bytes_; }
  long messages_sent() const { return messages_; }  // counted where bytes_sent is
  // "host" (messages in host memory), "staged" (device -> host copy -> MPI) or "cuda-aware".
  const char* path() const { return staged_ ? "staged" : on_device_ ? "cuda-aware" : "host"; }

 private:
  void post(bool e_down);
  void exchange_planes(Fields<T>& f, long depth);  // exchange_deep along x
  void finish(Fields<T>& f, bool e_down);
  MPI_Comm cart_;
  MPI_Datatype type_;
  int lower_[3], upper_[3];
  T* mpi_send(int a) { return staged_ ? hsend_[a].data() : send_[a]; }
  T* mpi_recv(int a) { return staged_ ? hrecv_[a].data() : recv_[a]; }
  void to_mpi(int a, std::size_t count);    // staged: message -> host copy
  void from_mpi(int a, std::size_t count);  // staged: host copy -> message
  T* send_[3] = {nullptr, nullptr, nullptr};  // message buffers (backend memory)
  T* recv_[3] = {nullptr, nullptr, nullptr};
  std::size_t cap_[3] = {0, 0, 0};            // elements per message buffer
  std::vector<T> hsend_[3], hrecv_[3];        // host staging copies (staged path only)
  bool on_device_ = false, staged_ = false;
  std::vector<T> deep_send_[2], deep_recv_[2];  // exchange_deep, toward lower [0] and upper [1]
  std::vector<MPI_Request> reqs_;
  double bytes_ = 0.0;
  long messages_ = 0;
};

}  // namespace yee
