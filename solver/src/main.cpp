// yee: entry point. Input is validated before MPI starts (and rank-count checks right
// after, identically on every rank), so bad input ends every rank with exit code 2
// and one line on stderr, with no collective left waiting.
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <stdexcept>

#include "build_info.hpp"
#include "io/collective.hpp"
#include "io/io_options.hpp"
#include "io/mpiio_guard.hpp"
#include "io/output_dir.hpp"
#include "io/temp_registry.hpp"
#include "kernel_contract.hpp"
#include "memory_limit.hpp"
#include "options.hpp"
#include "placement.hpp"
#include "report.hpp"
#include "solver.hpp"

namespace {

int usage_error(const char* what) {
  std::fprintf(stderr, "yee: error: %s\n", what);
  return 2;
}

// True when no MPI launcher started this process (mpirun, srun and hydra all export
// one of these), i.e. MPI_Init will make a singleton of one rank.
bool is_singleton() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return false;
  return true;
}

// This process's rank as the launcher announced it (before MPI_Init), 0 when unknown: an
// error found before MPI starts is the same on every rank, and only rank 0 prints it.
long launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* s = std::getenv(v)) return std::strtol(s, nullptr, 10);
  return 0;
}

int early_error(const char* what) {
  if (launcher_rank() == 0) usage_error(what);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  yee::Options opt;
  try {
    opt = yee::parse_options(argc, argv);
  } catch (const yee::UsageError& e) {
    return early_error(e.what());
  }
  if (opt.help) {
    std::fputs(yee::help_text().c_str(), stdout);
    return 0;
  }
  if (opt.version) {
    std::printf("yee %s (backend %s, git %s%s, %s, HDF5 %s)\n", YEE_VERSION, YEE_BACKEND_NAME,
                yee::build_info.git_sha, yee::build_info.dirty ? "-dirty" : "", yee::build_info.compiler,
                yee::io::hdf5_build_kind());
    return 0;
  }

  // A singleton knows its rank count (1) already: reject rank-dependent errors before
  // MPI_Init, which is the slow part of a rejected run.
  if (is_singleton()) {
    try {
      yee::Options probe = opt;
      yee::validate_for_ranks(probe, 1);
      yee::check_memory(probe, yee::rank_memory_need(probe, 0, 1), 1, yee::memory_limit(yee::resident_bytes()));
    } catch (const yee::UsageError& e) {
      return usage_error(e.what());
    }
  }

  yee::io::guard_mpiio_before_init(opt);  // MCA settings are read by MPI_Init
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  yee::io::install_signal_cleanup();  // after MPI_Init: ours runs first, then whatever was there
  if (size > 1) yee::io::set_signal_linger(300);
  try {
    yee::validate_for_ranks(opt, size);  // same inputs on every rank -> same verdict
  } catch (const yee::UsageError& e) {
    if (rank == 0) usage_error(e.what());
    MPI_Finalize();
    return 2;
  }
  // Memory, before anything is allocated: the ranks sharing a node add up their needs and
  // compare them with what that node's limit leaves (less what other processes use there;
  // what these ranks hold already is part of their need); any node's refusal stops every rank.
  std::string too_big;
  {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int node_ranks = 1;
    MPI_Comm_size(node, &node_ranks);
    double mine[2] = {yee::rank_memory_need(opt, rank, size), yee::resident_bytes()}, sums[2] = {0.0, 0.0};
    MPI_Allreduce(mine, sums, 2, MPI_DOUBLE, MPI_SUM, node);
    MPI_Comm_free(&node);
    try {
      yee::check_memory(opt, sums[0], node_ranks, yee::memory_limit(sums[1]));
    } catch (const yee::UsageError& e) {
      too_big = e.what();
    }
  }
  std::string refused = yee::io::first_error(MPI_COMM_WORLD, too_big);
  try {
    if (!refused.empty()) throw yee::UsageError(refused);
    yee::io::prepare_output_dir(opt, MPI_COMM_WORLD);  // rank 0 decides, every rank exits 2 on a bad --output-dir
  } catch (const yee::UsageError& e) {
    if (rank == 0) usage_error(e.what());
    MPI_Finalize();
    return 2;
  }
  // The halo's message path only matters for device buffers (or the CPU build's staging
  // test aid): accepted, with a stated warning rather than silently; after every check, so
  // a refused run still prints one line only.
  if (opt.cuda_aware_given && !YEE_BACKEND_DEVICE_GPU && !std::getenv("YEE_HALO_STAGING") &&
      rank == 0)
    std::fprintf(stderr, "yee: warning: --cuda-aware has no effect with the %s backend (halo messages are in host "
                         "memory)\n", YEE_BACKEND_NAME);
  if (opt.threads > 0) omp_set_num_threads(int(opt.threads));
  const int threads = omp_get_max_threads();

  int dims[3] = {int(opt.dims[0]), int(opt.dims[1]), int(opt.dims[2])};
  int periods[3] = {0, 0, 0};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);

  yee::RunResult res;
  int rc = 0;
  try {
    res = opt.precision == "f64" ? yee::run_solver<double>(opt, cart) : yee::run_solver<float>(opt, cart);
  } catch (const yee::UsageError& e) {  // input the device cannot run, agreed on all ranks before any step
    if (rank == 0) usage_error(e.what());
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 2;
  } catch (const std::exception& e) {  // agreed on all ranks inside run_solver
    if (rank == 0) std::fprintf(stderr, "yee: error: %s\n", e.what());
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 1;
  }

  yee::ReportContext ctx{&opt, &res, size, threads, "", 0.0, 0.0};
  ctx.placement_json = yee::gather_placement(cart, res.field_bytes, &ctx.peak_rss, &ctx.field_bytes);
  if (rank == 0) {
    if (!opt.quiet) std::fputs(yee::human_summary(ctx).c_str(), stderr);
    if (!opt.probe_out.empty() && !yee::write_atomically(opt.probe_out, yee::probes_csv(opt, res))) {
      std::fprintf(stderr, "yee: error: cannot write probe file %s\n", opt.probe_out.c_str());
      rc = 1;
    }
    if (!yee::write_atomically(opt.report, yee::report_json(ctx))) {
      std::fprintf(stderr, "yee: error: cannot write report %s\n", opt.report.c_str());
      rc = 1;
    }
    if (!res.valid) {
      std::fprintf(stderr, "yee: error: invalid result: %s\n", res.invalid_reason.c_str());
      rc = 1;
    }
  }
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return rc;
}
