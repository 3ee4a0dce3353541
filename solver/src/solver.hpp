#pragma once
// One run of the time loop for one precision; results gathered on rank 0.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/io_stats.hpp"
#include "options.hpp"
#include "timers.hpp"

namespace yee {

struct RunResult {
  PhaseTimers max_seconds;           // max over ranks per phase
  double total_seconds = 0.0;        // time-stepping loop, max over ranks
  PhaseTimers mean_seconds;          // mean over ranks per phase (an MPI profile's view: phases add up)
  double mean_total_seconds = 0.0;   // the loop, mean over ranks
  double update_min = 0.0;           // the updates' time (computation), fastest rank
  double update_stddev = 0.0;        // its standard deviation over ranks (paper 001: under 10 % of the mean)
  double energy = 0.0;               // discrete energy at the last diagnosed level
  std::vector<std::pair<long, double>> energy_series;  // (time level, energy)
  std::uint64_t checksum = 0;
  double div_e_max = 0.0, e_max = 0.0;
  std::vector<double> probes;        // rank 0: steps x probes, row-major
  double field_bytes = 0.0;          // this rank's field arrays
  double halo_bytes = 0.0;           // all ranks, whole loop
  double halo_messages = 0.0;        // messages sent by all ranks, whole loop
  double halo_bytes_rank_max = 0.0;     // the rank that sent most, whole loop (paper 002 counts per process)
  double halo_messages_rank_max = 0.0;  // the rank that sent most messages, whole loop
  double halo_seconds_per_message = 0.0;  // max over ranks of its halo time / its messages
  std::string device;                // rank 0's compute device ("host" on the CPU backend)
  std::string halo_path;             // host | staged | cuda-aware
  io::IoTotals io;                   // field output (rank 0: sums over ranks)
  long time_block = 1, tile_rows = 0;  // wavefront kernel: steps per pass (halo depth), tile rows
  long pass_tile_rows = 0;             // tile rows a full-length pass used (evened out over the threads)
  double traffic_ratio = 1.0;        // the cache model's traffic per update / the fused kernel's
  long cache_bytes = 0;              // the one core's cache share the model sized the pass for
  long passes = 0, pass_steps = 0;   // wavefront passes run and the steps they took
  bool valid = true;
  std::string invalid_reason;
};

// Runs the configured simulation on `cart`. Throws std::bad_alloc or std::runtime_error
// consistently on all ranks (failures are agreed with an Allreduce first).
template <typename T>
RunResult run_solver(const Options& opt, MPI_Comm cart);

}  // namespace yee
