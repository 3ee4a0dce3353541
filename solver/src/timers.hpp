#pragma once
// Named phase timers of the time loop (seconds, MPI_Wtime).
#include <mpi.h>

namespace yee {

enum Phase { kUpdateH = 0, kUpdateE, kUpdateFused, kSource, kHalo, kReduce, kDiag, kIo, kNumPhases };
inline const char* phase_name(int p) {
  static const char* names[] = {"update_h", "update_e", "update_fused", "source", "halo", "reduce", "diag", "io"};
  return names[p];
}

struct PhaseTimers {
  double seconds[kNumPhases] = {};
};

// Adds the wall time of its scope to one phase.
class Scope {
 public:
  Scope(PhaseTimers& t, Phase p) : t_(t), p_(p), start_(MPI_Wtime()) {}
  ~Scope() { t_.seconds[p_] += MPI_Wtime() - start_; }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  PhaseTimers& t_;
  Phase p_;
  double start_;
};

}  // namespace yee
