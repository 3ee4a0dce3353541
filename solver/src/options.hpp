#pragma once
// Run configuration: parsed from the command line and/or a config file, validated
// before MPI starts so that every rank rejects bad input identically and at once.
#include <array>
#include <stdexcept>
#include <string>
#include <vector>

namespace yee {

// A usage error: printed as one line "yee: error: <what>", exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Index3 = std::array<long, 3>;

struct Options {
  Index3 n{64, 64, 64};           // global cells per axis
  long steps = 100;
  std::string precision = "f32";  // f32 | f64
  std::string decomp = "auto";    // auto | PxQxR
  Index3 dims{0, 0, 0};           // parsed PxQxR, 0 = auto
  double courant = 0.0;           // S = c dt / dx; 0 = default 0.99/sqrt(3)
  std::string source = "ricker";  // ricker | gauss-sine | none
  double source_freq = 0.05;      // as given on the command line
  double source_freq_norm = 0.05; // cycles per dx/c
  double source_amp = 1.0;
  Index3 source_pos{-1, -1, -1};  // -1 = centre
  double dx = 1e-3;               // metres, only to convert a frequency in Hz
  std::string init_mode = "none"; // none | pulse | list of modes "TM110+TE101"
  long energy_every = 0;
  std::vector<Index3> probes;
  std::string probe_field = "Ez";
  std::string probe_out;          // empty: no probe file
  std::string report = "-";       // "-" = stdout
  std::string kernel = "fused";   // fused | split | wavefront
  long time_block = 0;            // wavefront: time steps per pass, 0 = auto (cache model)
  // Field output (src/io/): format, cadence, components, target and strategy.
  std::string output = "none";          // none | ascii | binary | hdf5
  long output_every = 1;                // write after every N-th step
  std::vector<int> output_fields{0, 1, 2, 3, 4, 5};  // Component ids, in the order given
  std::string output_dir = "yee-output";
  std::string output_strategy = "root"; // root | root-per-rank | per-rank | shared
  std::string ascii_layout = "indices"; // indices: i j k, shortest decimals | coordinates: x y z (m),
                                        // fixed-width exponent notation (paper 001)
  std::string hdf5_chunk = "auto";      // auto | none | CIxCJxCK
  int hdf5_deflate = -1;                // -1: no compression, else zlib level 0..9 (with shuffle)
  std::string hdf5_layout = "components"; // components: one dataset per component | records: one
                                          // 3-D dataset of records (array of the written components)
  bool overwrite = false;               // allow a non-empty --output-dir
  bool output_fsync = false;            // fsync every file before its rename
  long tile = 0;                  // rows per cache tile of the fused/wavefront kernel, 0 = auto
  bool quiet = false;
  bool progress = true;
  long threads = 0;               // 0 = OpenMP default (OMP_NUM_THREADS or all)
  bool gpu_per_rank = false;      // CUDA: each rank of a node on its own GPU (else shared round-robin)
  std::string cuda_aware = "auto";  // CUDA: auto | on | off, device buffers straight to MPI
  bool cuda_aware_given = false;
  std::string config;
  std::vector<std::string> given;  // the options set (command line and config file), once each
  bool help = false;
  bool version = false;
};

// Parses argv (and the --config file it names); throws UsageError. Does not need MPI.
Options parse_options(int argc, char** argv);

// Checks that need the rank count (decomposition, ranks vs cells); throws UsageError.
void validate_for_ranks(Options& opt, int ranks);

std::string help_text();

}  // namespace yee
