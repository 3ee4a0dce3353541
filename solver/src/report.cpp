#include "report.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "build_info.hpp"
#include "injected_slowdown.hpp"
#include "io/atomic_file.hpp"
#include "io/io_options.hpp"
#include "io/mpiio_guard.hpp"
#include "kernel_contract.hpp"
#include "placement.hpp"

namespace yee {
namespace {

std::string num(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string str(const std::string& in) { return "\"" + json_escape(in) + "\""; }

// Field output figures: GB/s = bytes written / seconds in the io phase (max over ranks).
std::string io_json(const Options& o, const RunResult& r) {
  const double secs = r.max_seconds.seconds[kIo];
  const long k = r.io.steps_written;
  std::string fields;
  for (int c : o.output_fields) fields += (fields.empty() ? "" : ", ") + str(io::component_name(c));
  std::ostringstream j;
  j << "{\"format\": " << str(o.output) << ", \"strategy\": " << str(o.output_strategy)
    << ", \"every\": " << o.output_every << ", \"fields\": [" << fields << "], \"dir\": "
    << (o.output == "none" ? "null" : str(o.output_dir)) << ", \"hdf5_chunk\": " << str(o.hdf5_chunk)
    << ", \"hdf5_deflate\": " << o.hdf5_deflate
    << ", \"hdf5_layout\": " << str(o.hdf5_layout)
    << ", \"fsync\": " << (o.output_fsync ? "true" : "false")
    << ", \"sync\": " << str(o.output_fsync ? "fsync each file before its rename, inside seconds.io" : "none: the page cache may hold the data")
    << ", \"mpiio_setting\": " << str(io::mpiio_guard_applied())
    << ", \"steps_written\": " << k
    << ", \"bytes_written\": " << num(r.io.bytes) << ", \"files_written\": " << r.io.files
    << ", \"seconds\": " << num(secs) << ", \"seconds_per_step\": " << num(k > 0 ? secs / double(k) : 0.0)
    << ", \"gbs\": " << num(secs > 0 ? r.io.bytes / secs / 1e9 : 0.0)
    << ", \"share\": " << num(r.total_seconds > 0 ? secs / r.total_seconds : 0.0) << "}";
  return j.str();
}

// Wavefront kernel: T and the model's tile rows, the rows a full pass's evened tiles had, the
// passes run, the cache model's traffic ratio.
std::string time_block_json(const Options& o, const RunResult& r) {
  if (o.kernel != "wavefront") return "null";
  std::ostringstream j;
  j << "{\"steps\": " << r.time_block << ", \"tile_rows\": " << r.tile_rows
    << ", \"pass_tile_rows\": " << r.pass_tile_rows << ", \"passes\": " << r.passes
    << ", \"steps_in_passes\": " << r.pass_steps << ", \"model_traffic_ratio\": " << num(r.traffic_ratio)
    << ", \"model_cache_bytes\": " << r.cache_bytes << "}";
  return j.str();
}

}  // namespace

std::string report_json(const ReportContext& ctx) {
  const Options& o = *ctx.opt;
  const RunResult& r = *ctx.res;
  // the same phases as "seconds", from another reduction over ranks
  auto phases_json = [](const double* p, double loop) {
    std::ostringstream s;
    s << "{\"update\": " << num(p[kUpdateH] + p[kUpdateE] + p[kUpdateFused] + p[kSource])
      << ", \"halo\": " << num(p[kHalo]) << ", \"reduce\": " << num(p[kReduce]) << ", \"diag\": " << num(p[kDiag])
      << ", \"io\": " << num(p[kIo]) << ", \"total\": " << num(loop) << "}";
    return s.str();
  };
  const double cells = double(o.n[0]) * double(o.n[1]) * double(o.n[2]);
  const double updates = cells * double(o.steps);
  const double total = r.total_seconds;
  const int bpc = bytes_per_cell(o.precision);
  const double* ph = r.max_seconds.seconds;
  char cs[17];
  std::snprintf(cs, sizeof cs, "%016llx", (unsigned long long)r.checksum);
  std::ostringstream j;
  j << "{\"schema\": \"yee-report\", \"schema_version\": " << kSchemaVersion
    << ", \"valid\": " << (r.valid ? "true" : "false");
  if (!r.valid) j << ", \"invalid_reason\": " << str(r.invalid_reason);
  j << ", \"grid\": {\"nx\": " << o.n[0] << ", \"ny\": " << o.n[1] << ", \"nz\": " << o.n[2] << "}"
    << ", \"cells\": " << (long long)cells << ", \"steps\": " << o.steps << ", \"ranks\": " << ctx.ranks
    << ", \"threads\": " << ctx.threads << ", \"dims\": [" << o.dims[0] << ", " << o.dims[1] << ", " << o.dims[2]
    << "], \"precision\": " << str(o.precision) << ", \"backend\": " << str(kernels::backend_name())
    << ", \"device\": " << str(r.device) << ", \"halo_path\": " << str(r.halo_path)
    << ", \"kernel\": " << str(o.kernel) << ", \"courant\": " << num(o.courant)
    << ", \"mcells_per_s\": " << num(updates / total / 1e6) << ", \"seconds\": {"
    << "\"update_h\": " << num(ph[kUpdateH]) << ", \"update_e\": " << num(ph[kUpdateE])
    << ", \"update_fused\": " << num(ph[kUpdateFused])
    << ", \"update\": " << num(ph[kUpdateH] + ph[kUpdateE] + ph[kUpdateFused] + ph[kSource])
    << ", \"source\": " << num(ph[kSource]) << ", \"halo\": " << num(ph[kHalo]) << ", \"reduce\": " << num(ph[kReduce])
    << ", \"diag\": " << num(ph[kDiag]) << ", \"io\": " << num(ph[kIo]) << ", \"total\": " << num(total) << "}"
    << ", \"seconds_mean\": " << phases_json(r.mean_seconds.seconds, r.mean_total_seconds)
    << ", \"update_spread\": {\"min\": " << num(r.update_min) << ", \"stddev\": " << num(r.update_stddev) << "}"
    << ", \"bytes_per_cell\": " << bpc << ", \"achieved_gbs\": " << num(double(bpc) * updates / total / 1e9)
    << ", \"halo_bytes\": " << num(r.halo_bytes) << ", \"halo_bytes_per_step\": " << num(r.halo_bytes / double(o.steps))
    << ", \"halo_share\": " << num(total > 0 ? ph[kHalo] / total : 0.0)
    << ", \"halo_messages\": " << num(r.halo_messages)
    << ", \"halo_messages_per_step\": " << num(r.halo_messages / double(o.steps))
    << ", \"halo_message_bytes_mean\": " << num(r.halo_messages > 0 ? r.halo_bytes / r.halo_messages : 0.0)
    << ", \"halo_bytes_per_rank_per_step_max\": " << num(r.halo_bytes_rank_max / double(o.steps))
    << ", \"halo_bytes_per_rank_per_step_mean\": " << num(r.halo_bytes / double(ctx.ranks) / double(o.steps))
    << ", \"halo_messages_per_rank_per_step_max\": " << num(r.halo_messages_rank_max / double(o.steps))
    << ", \"halo_seconds_per_step\": " << num(ph[kHalo] / double(o.steps))
    << ", \"halo_seconds_per_message\": " << num(r.halo_seconds_per_message) << ", \"time_block\": " << time_block_json(o, r)
    << ", \"energy\": " << num(r.energy) << ", \"energy_series\": [";
  for (std::size_t i = 0; i < r.energy_series.size(); ++i)
    j << (i ? ", " : "") << "[" << r.energy_series[i].first << ", " << num(r.energy_series[i].second) << "]";
  j << "], \"checksum\": \"" << cs << "\", \"div_e_max\": " << num(r.div_e_max) << ", \"e_max\": " << num(r.e_max)
    << ", \"source\": {\"type\": " << str(o.source) << ", \"freq\": " << num(o.source_freq_norm) << ", \"pos\": ["
    << o.source_pos[0] << ", " << o.source_pos[1] << ", " << o.source_pos[2] << "]}"
    << ", \"init_mode\": " << str(o.init_mode) << ", \"probes\": {\"count\": " << o.probes.size()
    << ", \"field\": " << str(o.probe_field) << ", \"file\": " << (o.probe_out.empty() ? "null" : str(o.probe_out))
    << "}, \"peak_rss_bytes\": " << (long long)ctx.peak_rss << ", \"field_bytes\": " << (long long)ctx.field_bytes
    << ", \"rss_over_fields\": " << num(ctx.field_bytes > 0 ? ctx.peak_rss / ctx.field_bytes : 0.0)
    << ", \"io\": " << io_json(o, r) << ", \"placement\": " << ctx.placement_json
    << ", \"build\": {\"version\": " << str(YEE_VERSION) << ", \"hdf5\": " << str(io::hdf5_build_kind())
    << ", \"git_sha\": " << str(build_info.git_sha) << ", \"dirty\": " << (build_info.dirty ? "true" : "false")
    << ", \"compiler\": " << str(build_info.compiler) << ", \"flags\": " << str(build_info.flags)
    << ", \"build_type\": " << str(build_info.build_type);
  if (kInjectedSlowdownPercent) j << ", \"injected_slowdown_percent\": " << kInjectedSlowdownPercent;
  j << "}}\n";
  return j.str();
}

std::string human_summary(const ReportContext& ctx) {
  const Options& o = *ctx.opt;
  const RunResult& r = *ctx.res;
  const double cells = double(o.n[0]) * double(o.n[1]) * double(o.n[2]);
  const double* ph = r.max_seconds.seconds;
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "yee: %s  %ldx%ldx%ld cells x %ld steps, %s, %d rank(s) [%ldx%ldx%ld] x %d thread(s), %s kernel\n"
                "yee: %.1f Mcells/s, %.3f s loop (update %.3f, halo %.3f, reduce %.3f), %.1f GB/s at %d B/cell\n"
                "yee: energy %.10g, checksum %016llx, peak RSS %.1f MiB (fields %.1f MiB)\n",
                r.valid ? "VALID" : "INVALID", o.n[0], o.n[1], o.n[2], o.steps, o.precision.c_str(), ctx.ranks,
                o.dims[0], o.dims[1], o.dims[2], ctx.threads, o.kernel.c_str(),
                cells * double(o.steps) / r.total_seconds / 1e6, r.total_seconds,
                ph[kUpdateH] + ph[kUpdateE] + ph[kUpdateFused] + ph[kSource], ph[kHalo], ph[kReduce],
                bytes_per_cell(o.precision) * cells * double(o.steps) / r.total_seconds / 1e9,
                bytes_per_cell(o.precision), r.energy, (unsigned long long)r.checksum, ctx.peak_rss / 1048576.0,
                ctx.field_bytes / 1048576.0);
  std::string text = buf;
  if (ctx.ranks > 1) {  // paper 002 counts halo traffic per process; the total grows with the ranks
    std::snprintf(buf, sizeof buf,
                  "yee: halo per step: %.0f B from all ranks; per rank %.0f B max, %.0f B mean, up to %.0f message(s)\n",
                  r.halo_bytes / double(o.steps), r.halo_bytes_rank_max / double(o.steps),
                  r.halo_bytes / double(ctx.ranks) / double(o.steps), r.halo_messages_rank_max / double(o.steps));
    text += buf;
  }
  if (o.output != "none" && r.io.steps_written > 0) {
    std::snprintf(buf, sizeof buf,
                  "yee: output %s/%s: %ld step(s), %.1f MB in %ld file(s) under %s, %.4f s/step, %.3f GB/s, "
                  "%.1f%% of the loop\n",
                  o.output.c_str(), o.output_strategy.c_str(), r.io.steps_written, r.io.bytes / 1e6, r.io.files,
                  o.output_dir.c_str(), ph[kIo] / double(r.io.steps_written),
                  ph[kIo] > 0 ? r.io.bytes / ph[kIo] / 1e9 : 0.0, 100.0 * ph[kIo] / r.total_seconds);
    text += buf;
  }
  return text;
}

std::string probes_csv(const Options& o, const RunResult& r) {
  std::ostringstream s;
  s << "# yee probes: field " << o.probe_field << ", courant " << num(o.courant) << ", grid " << o.n[0] << "x"
    << o.n[1] << "x" << o.n[2] << "\nstep,time";
  for (const auto& p : o.probes) s << ",p" << p[0] << "_" << p[1] << "_" << p[2];
  s << "\n";
  const std::size_t np = o.probes.size();
  const double half = o.probe_field[0] == 'H' ? 0.5 : 1.0;  // H is sampled at n+1/2, E at n+1
  for (long st = 0; st < o.steps; ++st) {
    s << st + 1 << "," << num((double(st) + half) * o.courant);
    for (std::size_t p = 0; p < np; ++p) s << "," << num(r.probes[std::size_t(st) * np + p]);
    s << "\n";
  }
  return s.str();
}

bool write_atomically(const std::string& path, const std::string& text) {
  if (path == "-") {
    return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 &&
      (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || path.compare(0, 5, "/dev/") == 0)) {
    // A device or pipe (/dev/null, /dev/stdout redirected to a file): write into it;
    // renaming over it would replace the device node or link.
    FILE* dev = std::fopen(path.c_str(), "wb");
    if (!dev) return false;
    const bool ok = std::fwrite(text.data(), 1, text.size(), dev) == text.size();
    return std::fclose(dev) == 0 && ok;
  }
  // A unique temporary created exclusively beside the target (never an existing file or a
  // planted symlink), renamed over it when complete.
  io::AtomicFile file(path, std::to_string(::getpid()), false);
  return file.write(text.data(), text.size()) && file.commit().empty();
}

}  // namespace yee
