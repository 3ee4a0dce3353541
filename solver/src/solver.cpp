// The time loop. One step reads like the physics:
//   update H -> exchange H -> update E -> source -> exchange E -> diagnostics
// (with the fused kernel, "update H" also updates E away from the faces that wait for
// the neighbour's H, and the rest of E follows the H exchange).
#include "solver.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <stdexcept>

#include "decomp.hpp"
#include "halo.hpp"
#include "injected_slowdown.hpp"
#include "io/writer.hpp"
#include "kernel_contract.hpp"
#include "modes.hpp"
#include "time_block.hpp"

namespace yee {
namespace {

double source_waveform(const Options& o, double t) {
  const double f = o.source_freq_norm;
  if (o.source == "ricker") {
    const double a = M_PI * f * (t - 1.5 / f);
    return o.source_amp * (1.0 - 2.0 * a * a) * std::exp(-a * a);
  }
  if (o.source == "gauss-sine") {
    const double tau = 1.0 / f, u = (t - 3.0 * tau) / tau;
    return o.source_amp * std::sin(2.0 * M_PI * f * (t - 3.0 * tau)) * std::exp(-u * u);
  }
  return 0.0;
}

struct InitContext {
  InitSpec spec;
  Index3 n;
  Index3 centre;
};

// Initial E in global indices; tangential E on the walls at index 0 is 0.
double initial_e(const void* ctxp, int comp, long gi, long gj, long gk) {
  const auto& ctx = *static_cast<const InitContext*>(ctxp);
  const long g[3] = {gi, gj, gk};
  for (int a = 0; a < 3; ++a)
    if (a != comp && g[a] == 0) return 0.0;
  double v = 0.0;
  for (const Mode& m : ctx.spec.modes) {
    if (m.comp != comp) continue;
    double p = 1.0;
    for (int a = 0; a < 3; ++a)
      if (a != comp) p *= std::sin(m.m[a] * M_PI * double(g[a]) / double(ctx.n[a]));
    v += p;
  }
  if (ctx.spec.pulse && comp == 2) {
    // Ez sits at (i, j, k+1/2); the pulse is centred on the source's Ez entry.
    const double x = double(gi - ctx.centre[0]), y = double(gj - ctx.centre[1]), z = double(gk - ctx.centre[2]);
    v += std::exp(-(x * x + y * y + z * z) / 9.0);
  }
  return v;
}

int probe_component(const std::string& name) {
  static const char* names[] = {"Ex", "Ey", "Ez", "Hx", "Hy", "Hz"};
  for (int c = 0; c < 6; ++c)
    if (name == names[c]) return c;
  return kEz;
}

// Local index of global g on this rank, or -1 when not owned.
long local_of(long g, long goff, long n) {
  return (g >= goff && g < goff + n) ? g - goff + 1 : -1;
}


// This rank's block of the global grid (its offset and extent along each axis).
template <typename T>
Fields<T> local_block(const Options& opt, const int coords[3]) {
  Fields<T> f;
  for (int a = 0; a < 3; ++a) {
    f.gn[a] = opt.n[a];
    f.goff[a] = block_begin(opt.n[a], opt.dims[a], coords[a]);
    f.n[a] = block_end(opt.n[a], opt.dims[a], coords[a]) - f.goff[a];
    f.defer_low[a] = coords[a] > 0;
  }
  f.tile = opt.tile;
  return f;
}

// Wavefront: time block T and tile rows from the cache model (or the flags), the same T
// on every rank (it is the halo depth); along the axes split across ranks the ghosts are
// T layers deep (a pass never reaches past one layer of ghosts on the others). The other
// kernels make one step per sweep: T = 1.
template <typename T>
BlockChoice choose_block(const Options& opt, MPI_Comm cart, Fields<T>& f, RunResult& res) {
  BlockChoice block{1, 0, 1.0};
  if (opt.kernel == "wavefront") {
    long max_steps = PassPlan::kMaxSteps;
    for (int a = 0; a < 3; ++a)
      if (opt.dims[a] > 1) max_steps = std::min(max_steps, opt.n[a] / opt.dims[a]);
    res.cache_bytes = long(kernels::cache_bytes_per_thread());
    block = choose_time_block(f.n[2], f.n[1], int(sizeof(T)), omp_get_max_threads(),
                              std::size_t(res.cache_bytes), max_steps, opt.time_block, opt.tile);
    MPI_Allreduce(MPI_IN_PLACE, &block.steps, 1, MPI_LONG, MPI_MIN, cart);
    for (int a = 0; a < 3; ++a)
      if (opt.dims[a] > 1 && block.steps > 1) f.ghost[a] = block.steps;
  }
  res.time_block = block.steps;
  res.tile_rows = block.tile_rows;
  res.traffic_ratio = block.traffic_ratio;
  return block;
}

// Device and field arrays. The node-local rank picks the device (one shared-memory
// communicator per node); a failure on any rank fails every rank with the same exception.
template <typename T>
void allocate_fields(const Options& opt, MPI_Comm cart, int rank, Fields<T>& f, RunResult& res) {
  MPI_Comm node;
  MPI_Comm_split_type(cart, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local_rank = 0, local_size = 1;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
  int ok = 1, usage = 0;
  std::string why = "cannot allocate the field arrays on at least one rank";
  try {
    res.device = kernels::select_device(local_rank, local_size, opt.gpu_per_rank);
    kernels::allocate(f);
  } catch (const std::bad_alloc&) {
    ok = 0;
  } catch (const UsageError& e) {  // what the device cannot run (a tile, a grid too large): bad input
    ok = 0;
    usage = 1;
    why = e.what();
  } catch (const std::runtime_error& e) {
    ok = 0;
    why = e.what();
  }
  int agreed[2] = {-ok, usage};  // max: any rank failed, any rank's input was refused
  MPI_Allreduce(MPI_IN_PLACE, agreed, 2, MPI_INT, MPI_MAX, cart);
  if (agreed[0] == 0) {
    kernels::release(f);
    if (agreed[1]) throw UsageError(usage ? why : "the device of another rank cannot run this input");
    throw std::runtime_error(ok ? "device setup or allocation failed on another rank" : why);
  }
  res.field_bytes = 6.0 * double(f.count) * sizeof(T);
}

// Cavity modes and/or a Gaussian pulse in E (H starts at zero).
template <typename T>
void set_initial_condition(const Options& opt, Fields<T>& f) {
  InitContext ictx{parse_init_mode(opt.init_mode), opt.n, opt.source_pos};
  if (ictx.spec.pulse || !ictx.spec.modes.empty()) kernels::init_e(f, &initial_e, &ictx);
}

// The soft source and the probes in local indices, where this rank owns them. Every rank
// keeps a zero-filled steps x probes table; the sum over ranks is the probe series.
struct PointsOwned {
  bool own_source = false;
  long source[3] = {0, 0, 0};
  int probe_comp = kEz;
  std::vector<std::array<long, 3>> probes;  // local indices of the probes this rank owns
  std::vector<int> probe_ids;               // their index in --probe order
  std::size_t probe_count = 0;              // all probes, owned or not (the table's row length)
  std::vector<double> samples;
};

template <typename T>
PointsOwned locate_points(const Options& opt, const Fields<T>& f) {
  PointsOwned pts;
  pts.own_source = opt.source != "none";
  for (int a = 0; a < 3; ++a) {
    pts.source[a] = local_of(opt.source_pos[a], f.goff[a], f.n[a]);
    pts.own_source = pts.own_source && pts.source[a] >= 0;
  }
  pts.probe_comp = probe_component(opt.probe_field);
  for (std::size_t p = 0; p < opt.probes.size(); ++p) {
    std::array<long, 3> l;
    bool mine = true;
    for (int a = 0; a < 3; ++a) {
      l[a] = local_of(opt.probes[p][a], f.goff[a], f.n[a]);
      mine = mine && l[a] >= 0;
    }
    if (mine) {
      pts.probes.push_back(l);
      pts.probe_ids.push_back(int(p));
    }
  }
  pts.probe_count = opt.probes.size();
  pts.samples.assign(pts.probe_count ? std::size_t(opt.steps) * pts.probe_count : 0, 0.0);
  return pts;
}

// Advances the fields: one time step (fused or split kernel), or several in one wavefront
// pass. Both return false when field output failed (agreed on every rank).
template <typename T>
class Stepper {
 public:
  Stepper(const Options& opt, MPI_Comm cart, const int coords[3], const BlockChoice& block, Fields<T>& f,
          Halo<T>& halo, io::FieldWriter<T>& writer, PointsOwned& pts, PhaseTimers& tm, RunResult& res)
      : opt_(opt), cart_(cart), block_(block), f_(f), halo_(halo), writer_(writer), pts_(pts), tm_(tm), res_(res),
        c_(T(opt.courant)),  // dt/dx with c = 1 (vacuum, eps = mu = 1)
        owned_{{1, 1, 1}, {f.n[0] + 1, f.n[1] + 1, f.n[2] + 1}},
        fused_(opt.kernel == "fused"),
        wavefront_(opt.kernel == "wavefront") {
    for (int a = 0; a < 3; ++a) coords_[a] = coords[a];
    plan_.tile_rows = block.tile_rows;
    plan_.probe_comp = pts.probe_comp;
    plan_.sample_stride = pts.probe_count;
    for (std::size_t q = 0; q < pts.probes.size(); ++q)
      plan_.probes.push_back({pts.probes[q][0], pts.probes[q][1], pts.probes[q][2], pts.probe_ids[q]});
  }

  // Steps s, s+1, ... that one wavefront pass may take (0 with the other kernels): none of
  // them diagnosed (energy steps run the split kernel), and the pass ends where the fields
  // are written.
  long pass_length(long st) const {
    if (!wavefront_) return 0;
    long run = 0;
    while (run < block_.steps && st + run < opt_.steps && !diagnose_at(st + run))
      if (writer_.due(st + ++run)) break;
    return run;
  }

  // One step: update H -> exchange H -> update E -> source -> exchange E -> diagnostics.
  bool step(long st) {
    const bool diagnose = diagnose_at(st);
    EnergySums sums;
    update_fields(diagnose ? &sums : nullptr);
    add_source(st);
    { Scope sc(tm_, kHalo); halo_.finish_e(f_); }
    if (diagnose) record_energy(st, sums);
    sample_probes(st);
    return write_due(st + 1);
  }

  // Steps st .. st+run-1 in one wavefront pass.
  bool pass(long st, long run) {
    { Scope sc(tm_, kHalo); halo_.exchange_deep(f_, run); }
    plan_pass(st, run);
    { Scope sc(tm_, kUpdateFused); kernels::time_block_pass(f_, plan_, c_); }
    ++res_.passes;
    res_.pass_steps += run;
    return write_due(st + run);
  }

 private:
  bool diagnose_at(long st) const {
    return (opt_.energy_every > 0 && st % opt_.energy_every == 0) || st == opt_.steps - 1;
  }

  // H then E with the H exchange between them. The fused kernel updates E away from the
  // faces that wait for the neighbour's H during the H sweep; diagnosed steps run the
  // split kernel, whose H sweep also sums the energy (sums: non-null on those steps only).
  void update_fields(EnergySums* sums) {
    halo_.post_h();
    if ((fused_ || wavefront_) && !sums) {
      { Scope sc(tm_, kUpdateFused); kernels::fused_part1(f_, c_); }
      { Scope sc(tm_, kHalo); halo_.finish_h(f_); halo_.post_e(); }
      { Scope sc(tm_, kUpdateE); kernels::fused_part2(f_, c_); }
    } else {
      { Scope sc(tm_, kUpdateH); kernels::update_h(f_, owned_, c_, sums); }
      { Scope sc(tm_, kHalo); halo_.finish_h(f_); halo_.post_e(); }
      { Scope sc(tm_, kUpdateE); kernels::update_e(f_, owned_, c_); }
    }
  }

  void add_source(long st) {
    if (!pts_.own_source) return;
    Scope sc(tm_, kSource);
    kernels::add_to(f_, kEz, pts_.source[0], pts_.source[1], pts_.source[2],
                    source_waveform(opt_, double(st + 1) * opt_.courant));
  }

  void record_energy(long st, const EnergySums& sums) {
    Scope sc(tm_, kReduce);
    double both[2] = {sums.e2, sums.hh};
    MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_DOUBLE, MPI_SUM, cart_);
    res_.energy = 0.5 * (both[0] + both[1]);
    res_.energy_series.emplace_back(st, res_.energy);
  }

  void sample_probes(long st) {
    if (pts_.probes.empty()) return;
    Scope sc(tm_, kDiag);
    for (std::size_t q = 0; q < pts_.probes.size(); ++q)
      pts_.samples[std::size_t(st) * pts_.probe_count + std::size_t(pts_.probe_ids[q])] =
          kernels::read(f_, pts_.probe_comp, pts_.probes[q][0], pts_.probes[q][1], pts_.probes[q][2]);
  }

  // Writes the fields when time level `level` is due; false when that failed (the error is
  // agreed on every rank and reported after the loop).
  bool write_due(long level) {
    if (!writer_.due(level)) return true;
    Scope sc(tm_, kIo);
    return writer_.write_step(f_, level);
  }

  // The boxes, tiles, source values and probe table of a pass of `run` steps from st.
  void plan_pass(long st, long run) {
    plan_.steps = int(run);
    for (int t = 0; t < run; ++t)
      for (int a = 0; a < 3; ++a) {  // toward a neighbour: recompute its cells that later steps need
        plan_.box[t].lo[a] = coords_[a] > 0 ? 1 - (run - t) : 1;
        plan_.ebox[t].lo[a] = coords_[a] > 0 ? 1 - (run - 1 - t) : 1;
        plan_.box[t].hi[a] = plan_.ebox[t].hi[a] =
            coords_[a] < opt_.dims[a] - 1 ? f_.n[a] + 1 + (run - 1 - t) : f_.n[a] + 1;
      }
    // Skewed rows u = j + t of the pass: from box[0]'s lowest row to box[run-1]'s highest + run - 1.
    const long span = plan_.box[run - 1].hi[1] + (run - 1) - plan_.box[0].lo[1];
    plan_.tile_rows = opt_.tile > 0 ? opt_.tile : even_tile_rows(span, block_.tile_rows, omp_get_max_threads());
    if (run == block_.steps) res_.pass_tile_rows = plan_.tile_rows;
    plan_.has_source = opt_.source != "none";
    for (int a = 0; a < 3; ++a) {
      plan_.source[a] = opt_.source_pos[a] - f_.goff[a] + 1;
      plan_.has_source =
          plan_.has_source && plan_.source[a] >= plan_.ebox[0].lo[a] && plan_.source[a] < plan_.ebox[0].hi[a];
    }
    for (int t = 0; t < run; ++t) plan_.source_value[t] = source_waveform(opt_, double(st + t + 1) * opt_.courant);
    plan_.samples = pts_.probe_count ? pts_.samples.data() + std::size_t(st) * pts_.probe_count : nullptr;
  }

  const Options& opt_;
  MPI_Comm cart_;
  int coords_[3];
  const BlockChoice& block_;
  Fields<T>& f_;
  Halo<T>& halo_;
  io::FieldWriter<T>& writer_;
  PointsOwned& pts_;
  PhaseTimers& tm_;
  RunResult& res_;
  const T c_;
  const Box owned_;
  const bool fused_, wavefront_;
  PassPlan plan_;
};

// One progress line on stderr at most every 5 s (rank 0, unless --quiet / --no-progress).
class Progress {
 public:
  Progress(const Options& opt, int rank, double t0)
      : opt_(opt), on_(rank == 0 && !opt.quiet && opt.progress), t0_(t0), next_(t0 + 3.0),
        cells_(double(opt.n[0]) * double(opt.n[1]) * double(opt.n[2])) {}

  void after(long s) {
    if (!on_) return;
    const double now = MPI_Wtime();
    if (now < next_) return;
    const double rate = cells_ * double(s) / (now - t0_) / 1e6;
    std::fprintf(stderr, "yee: step %ld/%ld (%.0f%%), %.1f Mcells/s, about %.0f s left\n", s, opt_.steps,
                 100.0 * double(s) / double(opt_.steps), rate, (now - t0_) / double(s) * double(opt_.steps - s));
    next_ = now + 5.0;
  }

 private:
  const Options& opt_;
  const bool on_;
  const double t0_;
  double next_;
  const double cells_;
};

// The time loop: wavefront passes where they fit, single steps elsewhere; stops early when
// field output fails. Returns this rank's loop time (the output's final flush included).
template <typename T>
double time_loop(const Options& opt, int rank, Stepper<T>& stepper, Fields<T>& f, Halo<T>& halo,
                 io::FieldWriter<T>& writer, PhaseTimers& tm) {
  const double t0 = MPI_Wtime();
  Progress progress(opt, rank, t0);
  bool e_ghosts_stale = false;  // a pass leaves the E ghosts one step behind
  InjectedSlowdown slowdown;    // nothing unless built for testing a regression gate
  for (long s = 0; s < opt.steps;) {
    const long run = stepper.pass_length(s);
    bool ok;
    slowdown.step_begins();
    if (run >= 2) {
      ok = stepper.pass(s, run);
      s += run;
      e_ghosts_stale = true;
    } else {
      if (e_ghosts_stale) {
        Scope sc(tm, kHalo);
        halo.post_e();
        halo.finish_e(f);
        e_ghosts_stale = false;
      }
      ok = stepper.step(s);
      s += 1;
    }
    slowdown.step_ends();
    if (!ok) break;
    progress.after(s);
  }
  if (writer.error().empty()) {
    Scope sc(tm, kIo);
    writer.finish();
  }
  return MPI_Wtime() - t0;
}

// Phase times (max and mean over ranks), the loop time and the halo traffic of the loop.
template <typename T>
void collect_timings(MPI_Comm cart, const PhaseTimers& tm, double loop, const Halo<T>& halo,
                     double bytes_before_loop, long messages_before_loop, RunResult& res) {
  int size = 1;
  MPI_Comm_size(cart, &size);
  MPI_Reduce(tm.seconds, res.max_seconds.seconds, kNumPhases, MPI_DOUBLE, MPI_MAX, 0, cart);
  MPI_Reduce(tm.seconds, res.mean_seconds.seconds, kNumPhases, MPI_DOUBLE, MPI_SUM, 0, cart);
  MPI_Reduce(&loop, &res.mean_total_seconds, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  for (double& s : res.mean_seconds.seconds) s /= double(size);
  res.mean_total_seconds /= double(size);
  // the spread of the computation over ranks: min and the sum of squares, for the standard deviation
  const double upd = tm.seconds[kUpdateH] + tm.seconds[kUpdateE] + tm.seconds[kUpdateFused] + tm.seconds[kSource];
  const double sq = upd * upd;
  double sum_sq = 0.0;
  MPI_Reduce(&upd, &res.update_min, 1, MPI_DOUBLE, MPI_MIN, 0, cart);
  MPI_Reduce(&sq, &sum_sq, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  const double m = res.mean_seconds.seconds[kUpdateH] + res.mean_seconds.seconds[kUpdateE] +
                   res.mean_seconds.seconds[kUpdateFused] + res.mean_seconds.seconds[kSource];
  res.update_stddev = std::sqrt(std::max(0.0, sum_sq / double(size) - m * m));
  MPI_Allreduce(MPI_IN_PLACE, &loop, 1, MPI_DOUBLE, MPI_MAX, cart);
  res.total_seconds = loop;
  double hb = halo.bytes_sent() - bytes_before_loop;
  MPI_Reduce(&hb, &res.halo_bytes, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  MPI_Reduce(&hb, &res.halo_bytes_rank_max, 1, MPI_DOUBLE, MPI_MAX, 0, cart);
  // Message statistics (paper 002, Table 1): the exchange time a rank spends per message it sends.
  const double hm = double(halo.messages_sent() - messages_before_loop);
  const double per_message = hm > 0 ? tm.seconds[kHalo] / hm : 0.0;
  MPI_Reduce(&hm, &res.halo_messages, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  MPI_Reduce(&hm, &res.halo_messages_rank_max, 1, MPI_DOUBLE, MPI_MAX, 0, cart);
  MPI_Reduce(&per_message, &res.halo_seconds_per_message, 1, MPI_DOUBLE, MPI_MAX, 0, cart);
}

// End-of-run diagnostics (outside the timed loop): checksum, divergence, probe series.
template <typename T>
void collect_diagnostics(MPI_Comm cart, int rank, Fields<T>& f, Halo<T>& halo, const PointsOwned& pts,
                         RunResult& res) {
  std::uint64_t cs = kernels::checksum(f);
  MPI_Reduce(&cs, &res.checksum, 1, MPI_UINT64_T, MPI_SUM, 0, cart);
  halo.exchange_e_up(f);
  double de[2];
  kernels::div_e(f, &de[0], &de[1]);
  MPI_Reduce(rank == 0 ? MPI_IN_PLACE : de, de, 2, MPI_DOUBLE, MPI_MAX, 0, cart);
  res.div_e_max = de[0];
  res.e_max = de[1];
  if (pts.probe_count) {
    res.probes.assign(pts.samples.size(), 0.0);
    MPI_Reduce(pts.samples.data(), res.probes.data(), int(pts.samples.size()), MPI_DOUBLE, MPI_SUM, 0, cart);
  }
  if (!std::isfinite(res.energy) || !std::isfinite(res.e_max)) {
    res.valid = false;
    res.invalid_reason = "fields are not finite";
  }
}

}  // namespace

template <typename T>
RunResult run_solver(const Options& opt, MPI_Comm cart) {
  int rank, coords[3];
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 3, coords);
  RunResult res;

  // Set-up: this rank's block, the time block (the ghost depth), the arrays, the initial
  // condition, where the source and probes are, output and the halo exchange.
  Fields<T> f = local_block<T>(opt, coords);
  const BlockChoice block = choose_block(opt, cart, f, res);
  allocate_fields(opt, cart, rank, f, res);
  set_initial_condition(opt, f);
  PointsOwned pts = locate_points(opt, f);
  io::FieldWriter<T> writer(opt, cart, f);
  Halo<T> halo(cart, f, opt.cuda_aware);
  res.halo_path = halo.path();
  halo.post_e();
  halo.finish_e(f);  // E ghosts of the initial condition

  PhaseTimers tm;
  Stepper<T> stepper(opt, cart, coords, block, f, halo, writer, pts, tm, res);
  MPI_Barrier(cart);
  // what the initial E exchange sent is not the loop's
  const double bytes_before_loop = halo.bytes_sent();
  const long messages_before_loop = halo.messages_sent();
  const double loop = time_loop(opt, rank, stepper, f, halo, writer, tm);

  collect_timings(cart, tm, loop, halo, bytes_before_loop, messages_before_loop, res);
  collect_diagnostics(cart, rank, f, halo, pts, res);
  res.io = writer.totals();
  kernels::release(f);
  if (!writer.error().empty()) throw std::runtime_error("field output: " + writer.error());
  return res;
}

template RunResult run_solver<float>(const Options&, MPI_Comm);
template RunResult run_solver<double>(const Options&, MPI_Comm);

}  // namespace yee
