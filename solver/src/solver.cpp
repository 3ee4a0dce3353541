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

}  // namespace

template <typename T>
RunResult run_solver(const Options& opt, MPI_Comm cart) {
  int rank, coords[3];
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 3, coords);
  RunResult res;

  Fields<T> f;
  for (int a = 0; a < 3; ++a) {
    f.gn[a] = opt.n[a];
    f.goff[a] = block_begin(opt.n[a], opt.dims[a], coords[a]);
    f.n[a] = block_end(opt.n[a], opt.dims[a], coords[a]) - f.goff[a];
    f.defer_low[a] = coords[a] > 0;
  }
  f.tile = opt.tile;
  // Wavefront: time block T and tile rows from the cache model (or the flags), the same T
  // on every rank (it is the halo depth); along the axes split across ranks the ghosts are
  // T layers deep (a pass never reaches past one layer of ghosts on the others).
  const bool wavefront = opt.kernel == "wavefront";
  int size = 1;
  MPI_Comm_size(cart, &size);
  BlockChoice block{1, 0, 1.0};
  if (wavefront) {
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
  // Device: the node-local rank picks it (one shared-memory communicator per node).
  MPI_Comm node;
  MPI_Comm_split_type(cart, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local_rank = 0, local_size = 1;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
  int ok = 1;
  std::string why = "cannot allocate the field arrays on at least one rank";
  try {
    res.device = kernels::select_device(local_rank, local_size, opt.gpu_per_rank);
    kernels::allocate(f);
  } catch (const std::bad_alloc&) {
    ok = 0;
  } catch (const std::runtime_error& e) {
    ok = 0;
    why = e.what();
  }
  int all_ok = ok;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, cart);
  if (!all_ok) {
    kernels::release(f);
    throw std::runtime_error(ok ? "device setup or allocation failed on another rank" : why);
  }
  res.field_bytes = 6.0 * double(f.count) * sizeof(T);

  InitContext ictx{parse_init_mode(opt.init_mode), opt.n, opt.source_pos};
  if (ictx.spec.pulse || !ictx.spec.modes.empty()) kernels::init_e(f, &initial_e, &ictx);

  // Source and probes: local indices where this rank owns them.
  long src[3];
  bool own_src = opt.source != "none";
  for (int a = 0; a < 3; ++a) {
    src[a] = local_of(opt.source_pos[a], f.goff[a], f.n[a]);
    own_src = own_src && src[a] >= 0;
  }
  const int pcomp = probe_component(opt.probe_field);
  std::vector<std::array<long, 3>> my_probes;  // local indices of the probes this rank owns
  std::vector<int> my_probe_ids;
  for (std::size_t p = 0; p < opt.probes.size(); ++p) {
    std::array<long, 3> l;
    bool mine = true;
    for (int a = 0; a < 3; ++a) {
      l[a] = local_of(opt.probes[p][a], f.goff[a], f.n[a]);
      mine = mine && l[a] >= 0;
    }
    if (mine) {
      my_probes.push_back(l);
      my_probe_ids.push_back(int(p));
    }
  }
  const std::size_t np = opt.probes.size();
  std::vector<double> samples(np ? std::size_t(opt.steps) * np : 0, 0.0);

  io::FieldWriter<T> writer(opt, cart, f);
  Halo<T> halo(cart, f, opt.cuda_aware);
  res.halo_path = halo.path();
  halo.post_e();
  halo.finish_e(f);  // E ghosts of the initial condition

  const T c = T(opt.courant);  // dt/dx with c = 1 (vacuum, eps = mu = 1)
  const Box owned{{1, 1, 1}, {f.n[0] + 1, f.n[1] + 1, f.n[2] + 1}};
  const bool fused = opt.kernel == "fused";
  const bool show_progress = rank == 0 && !opt.quiet && opt.progress;
  const double cells = double(opt.n[0]) * double(opt.n[1]) * double(opt.n[2]);
  PhaseTimers tm;

  auto diagnose_at = [&](long st) {
    return (opt.energy_every > 0 && st % opt.energy_every == 0) || st == opt.steps - 1;
  };
  // Steps s, s+1, ... that one wavefront pass may take: none of them diagnosed (energy
  // steps run the split kernel), and the pass ends where the fields are written.
  auto pass_length = [&](long st) {
    long run = 0;
    while (run < block.steps && st + run < opt.steps && !diagnose_at(st + run))
      if (writer.due(st + ++run)) break;
    return run;
  };
  // One step of the fused or split kernel; false when field output failed.
  auto one_step = [&](long st) {
    const bool diagnose = diagnose_at(st);
    EnergySums sums;
    halo.post_h();
    if ((fused || wavefront) && !diagnose) {
      { Scope sc(tm, kUpdateFused); kernels::fused_part1(f, c); }
      { Scope sc(tm, kHalo); halo.finish_h(f); halo.post_e(); }
      { Scope sc(tm, kUpdateE); kernels::fused_part2(f, c); }
    } else {
      { Scope sc(tm, kUpdateH); kernels::update_h(f, owned, c, diagnose ? &sums : nullptr); }
      { Scope sc(tm, kHalo); halo.finish_h(f); halo.post_e(); }
      { Scope sc(tm, kUpdateE); kernels::update_e(f, owned, c); }
    }
    if (own_src) {
      Scope sc(tm, kSource);
      kernels::add_to(f, kEz, src[0], src[1], src[2], source_waveform(opt, double(st + 1) * opt.courant));
    }
    { Scope sc(tm, kHalo); halo.finish_e(f); }
    if (diagnose) {
      Scope sc(tm, kReduce);
      double both[2] = {sums.e2, sums.hh};
      MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_DOUBLE, MPI_SUM, cart);
      res.energy = 0.5 * (both[0] + both[1]);
      res.energy_series.emplace_back(st, res.energy);
    }
    if (!my_probes.empty()) {
      Scope sc(tm, kDiag);
      for (std::size_t q = 0; q < my_probes.size(); ++q)
        samples[std::size_t(st) * np + std::size_t(my_probe_ids[q])] =
            kernels::read(f, pcomp, my_probes[q][0], my_probes[q][1], my_probes[q][2]);
    }
    if (writer.due(st + 1)) {
      Scope sc(tm, kIo);
      if (!writer.write_step(f, st + 1)) return false;  // agreed on every rank; reported below
    }
    return true;
  };
  // Steps st .. st+run-1 in one wavefront pass; false when field output failed.
  PassPlan plan;
  plan.tile_rows = block.tile_rows;
  plan.probe_comp = pcomp;
  plan.sample_stride = np;
  for (std::size_t q = 0; q < my_probes.size(); ++q)
    plan.probes.push_back({my_probes[q][0], my_probes[q][1], my_probes[q][2], my_probe_ids[q]});
  auto one_pass = [&](long st, long run) {
    { Scope sc(tm, kHalo); halo.exchange_deep(f, run); }
    plan.steps = int(run);
    for (int t = 0; t < run; ++t)
      for (int a = 0; a < 3; ++a) {  // toward a neighbour: recompute its cells that later steps need
        plan.box[t].lo[a] = coords[a] > 0 ? 1 - (run - t) : 1;
        plan.ebox[t].lo[a] = coords[a] > 0 ? 1 - (run - 1 - t) : 1;
        plan.box[t].hi[a] = plan.ebox[t].hi[a] = coords[a] < opt.dims[a] - 1 ? f.n[a] + 1 + (run - 1 - t) : f.n[a] + 1;
      }
    // Skewed rows u = j + t of the pass: from box[0]'s lowest row to box[run-1]'s highest + run - 1.
    const long span = plan.box[run - 1].hi[1] + (run - 1) - plan.box[0].lo[1];
    plan.tile_rows = opt.tile > 0 ? opt.tile : even_tile_rows(span, block.tile_rows, omp_get_max_threads());
    if (run == block.steps) res.pass_tile_rows = plan.tile_rows;
    plan.has_source = opt.source != "none";
    for (int a = 0; a < 3; ++a) {
      plan.source[a] = opt.source_pos[a] - f.goff[a] + 1;
      plan.has_source = plan.has_source && plan.source[a] >= plan.ebox[0].lo[a] && plan.source[a] < plan.ebox[0].hi[a];
    }
    for (int t = 0; t < run; ++t) plan.source_value[t] = source_waveform(opt, double(st + t + 1) * opt.courant);
    plan.samples = np ? samples.data() + std::size_t(st) * np : nullptr;
    { Scope sc(tm, kUpdateFused); kernels::time_block_pass(f, plan, c); }
    ++res.passes;
    res.pass_steps += run;
    if (writer.due(st + run)) {
      Scope sc(tm, kIo);
      if (!writer.write_step(f, st + run)) return false;
    }
    return true;
  };

  MPI_Barrier(cart);
  // what the initial E exchange sent is not the loop's
  const double bytes_before_loop = halo.bytes_sent();
  const long messages_before_loop = halo.messages_sent();
  const double t0 = MPI_Wtime();
  double next_progress = t0 + 3.0;
  bool e_ghosts_stale = false;  // a pass leaves the E ghosts one step behind
  InjectedSlowdown slowdown;    // nothing unless built for testing a regression gate
  for (long s = 0; s < opt.steps;) {
    const long run = wavefront ? pass_length(s) : 0;
    bool ok;
    slowdown.step_begins();
    if (run >= 2) {
      ok = one_pass(s, run);
      s += run;
      e_ghosts_stale = true;
    } else {
      if (e_ghosts_stale) {
        Scope sc(tm, kHalo);
        halo.post_e();
        halo.finish_e(f);
        e_ghosts_stale = false;
      }
      ok = one_step(s);
      s += 1;
    }
    slowdown.step_ends();
    if (!ok) break;
    if (show_progress) {
      const double now = MPI_Wtime();
      if (now >= next_progress) {
        const double rate = cells * double(s) / (now - t0) / 1e6;
        std::fprintf(stderr, "yee: step %ld/%ld (%.0f%%), %.1f Mcells/s, about %.0f s left\n", s, opt.steps,
                     100.0 * double(s) / double(opt.steps), rate, (now - t0) / double(s) * double(opt.steps - s));
        next_progress = now + 5.0;
      }
    }
  }
  if (writer.error().empty()) {
    Scope sc(tm, kIo);
    writer.finish();
  }
  double loop = MPI_Wtime() - t0;

  MPI_Reduce(tm.seconds, res.max_seconds.seconds, kNumPhases, MPI_DOUBLE, MPI_MAX, 0, cart);
  MPI_Reduce(tm.seconds, res.mean_seconds.seconds, kNumPhases, MPI_DOUBLE, MPI_SUM, 0, cart);
  MPI_Reduce(&loop, &res.mean_total_seconds, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  for (double& s : res.mean_seconds.seconds) s /= double(size);
  res.mean_total_seconds /= double(size);
  MPI_Allreduce(MPI_IN_PLACE, &loop, 1, MPI_DOUBLE, MPI_MAX, cart);
  res.total_seconds = loop;
  double hb = halo.bytes_sent() - bytes_before_loop;
  MPI_Reduce(&hb, &res.halo_bytes, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  // Message statistics (paper 002, Table 1): the exchange time a rank spends per message it sends.
  const double hm = double(halo.messages_sent() - messages_before_loop);
  const double per_message = hm > 0 ? tm.seconds[kHalo] / hm : 0.0;
  MPI_Reduce(&hm, &res.halo_messages, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  MPI_Reduce(&per_message, &res.halo_seconds_per_message, 1, MPI_DOUBLE, MPI_MAX, 0, cart);

  // End-of-run diagnostics (outside the timed loop).
  std::uint64_t cs = kernels::checksum(f);
  MPI_Reduce(&cs, &res.checksum, 1, MPI_UINT64_T, MPI_SUM, 0, cart);
  halo.exchange_e_up(f);
  double de[2];
  kernels::div_e(f, &de[0], &de[1]);
  MPI_Reduce(rank == 0 ? MPI_IN_PLACE : de, de, 2, MPI_DOUBLE, MPI_MAX, 0, cart);
  res.div_e_max = de[0];
  res.e_max = de[1];
  if (np) {
    res.probes.assign(samples.size(), 0.0);
    MPI_Reduce(samples.data(), res.probes.data(), int(samples.size()), MPI_DOUBLE, MPI_SUM, 0, cart);
  }
  if (!std::isfinite(res.energy) || !std::isfinite(res.e_max)) {
    res.valid = false;
    res.invalid_reason = "fields are not finite";
  }
  res.io = writer.totals();
  kernels::release(f);
  if (!writer.error().empty()) throw std::runtime_error("field output: " + writer.error());
  return res;
}

template RunResult run_solver<float>(const Options&, MPI_Comm);
template RunResult run_solver<double>(const Options&, MPI_Comm);

}  // namespace yee
