#pragma once
// Halo exchange on the Cartesian communicator. Only the two field components tangential
// to a face cross it: H travels up (the E update reads H at index-1), E travels down
// (the H update reads E at index+1). Receives are posted before the update that
// precedes the exchange; packing goes through the kernel contract.
#include <mpi.h>

#include <vector>

#include "kernel_contract.hpp"

namespace yee {

template <typename T>
class Halo {
 public:
  Halo(MPI_Comm cart, const Fields<T>& f);
  // H: owned top layer -> upper neighbour's low ghost.
  void post_h() { post(false); }
  void finish_h(Fields<T>& f) { finish(f, false); }
  // E: owned bottom layer -> lower neighbour's high ghost.
  void post_e() { post(true); }
  void finish_e(Fields<T>& f) { finish(f, true); }
  // Normal E component upwards (only for div E, which reads E at index-1).
  void exchange_e_up(Fields<T>& f);
  double bytes_sent() const { return bytes_; }

 private:
  void post(bool e_down);
  void finish(Fields<T>& f, bool e_down);
  MPI_Comm cart_;
  MPI_Datatype type_;
  int lower_[3], upper_[3];
  std::vector<T> send_[3], recv_[3];
  std::vector<MPI_Request> reqs_;
  double bytes_ = 0.0;
};

}  // namespace yee
