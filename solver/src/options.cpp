// Command-line and config-file parsing. One table of flags drives both, so a new
// flag (e.g. the --output* family) is one entry in kFlags plus one setter.
#include "options.hpp"

#include <cerrno>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "decomp.hpp"
#include "io/io_options.hpp"
#include "modes.hpp"

namespace yee {
namespace {

constexpr long kMaxCellsPerAxis = 1L << 20;
constexpr long kMaxTimeBlock = 64;  // PassPlan::kMaxSteps

struct Flag {
  const char* name;     // long name without dashes; also the config key
  const char* metavar;  // nullptr: boolean switch
  const char* help;
  std::function<void(Options&, const std::string&)> set;
};

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (static_cast<unsigned char>(c) < 32 || c == 127) ? '?' : c;
  if (out.size() > 60) out = out.substr(0, 57) + "...";
  return out + "'";
}

long parse_long(const std::string& key, const std::string& v, long lo, long hi) {
  errno = 0;
  char* end = nullptr;
  const char* s = v.c_str();
  long x = std::strtol(s, &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE || v.find_first_of(" \t") != std::string::npos)
    throw UsageError("--" + key + ": " + quote(v) + " is not an integer");
  if (x < lo || x > hi)
    throw UsageError("--" + key + ": " + std::to_string(x) + " is out of range [" + std::to_string(lo) +
                     ", " + std::to_string(hi) + "]");
  return x;
}

double parse_double(const std::string& key, const std::string& v) {
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x) ||
      v.find_first_of(" \t") != std::string::npos)
    throw UsageError("--" + key + ": " + quote(v) + " is not a finite number");
  return x;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

Index3 parse_point(const std::string& key, const std::string& v) {
  auto parts = split(v, ',');
  if (parts.size() != 3) throw UsageError("--" + key + ": " + quote(v) + " is not i,j,k");
  Index3 p;
  for (int d = 0; d < 3; ++d) p[d] = parse_long(key, parts[d], 0, kMaxCellsPerAxis - 1);
  return p;
}

std::string one_of(const std::string& key, const std::string& v, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return v;
    list += (list.empty() ? "" : "|") + std::string(a);
  }
  throw UsageError("--" + key + ": " + quote(v) + " is not one of " + list);
}

const std::vector<Flag>& flags() {
  static const std::vector<Flag> table = {
      {"nx", "N", "cells along x (default 64)",
       [](Options& o, const std::string& v) { o.n[0] = parse_long("nx", v, 1, kMaxCellsPerAxis); }},
      {"ny", "N", "cells along y (default 64)",
       [](Options& o, const std::string& v) { o.n[1] = parse_long("ny", v, 1, kMaxCellsPerAxis); }},
      {"nz", "N", "cells along z (default 64)",
       [](Options& o, const std::string& v) { o.n[2] = parse_long("nz", v, 1, kMaxCellsPerAxis); }},
      {"n", "N", "cells along every axis (sets nx, ny and nz)",
       [](Options& o, const std::string& v) { o.n[0] = o.n[1] = o.n[2] = parse_long("n", v, 1, kMaxCellsPerAxis); }},
      {"steps", "N", "time steps (default 100)",
       [](Options& o, const std::string& v) { o.steps = parse_long("steps", v, 1, 1000000000L); }},
      {"precision", "f32|f64", "floating-point precision of the fields (default f32)",
       [](Options& o, const std::string& v) { o.precision = one_of("precision", v, {"f32", "f64"}); }},
      {"decomp", "auto|PxQxR", "MPI process grid; P*Q*R must equal the rank count (default auto)",
       [](Options& o, const std::string& v) {
         o.decomp = v;
         o.dims = {0, 0, 0};
         if (v == "auto") return;
         auto parts = split(v, 'x');
         if (parts.size() != 3) throw UsageError("--decomp: " + quote(v) + " is not auto or PxQxR");
         for (int d = 0; d < 3; ++d) o.dims[d] = parse_long("decomp", parts[d], 1, kMaxCellsPerAxis);
       }},
      {"courant", "S", "Courant number c*dt/dx, 0 < S <= 1/sqrt(3) (default 0.99/sqrt(3))",
       [](Options& o, const std::string& v) {
         o.courant = parse_double("courant", v);
         if (!(o.courant > 0.0)) throw UsageError("--courant: must be > 0 (leave it out for the default)");
       }},
      {"source", "ricker|gauss-sine|none", "soft Ez point source waveform (default ricker)",
       [](Options& o, const std::string& v) { o.source = one_of("source", v, {"ricker", "gauss-sine", "none"}); }},
      {"source-freq", "F", "source frequency: < 1 is cycles per dx/c (normalised), >= 1 is Hz with --dx (default 0.05)",
       [](Options& o, const std::string& v) { o.source_freq = parse_double("source-freq", v); }},
      {"source-amp", "A", "source amplitude (default 1)",
       [](Options& o, const std::string& v) { o.source_amp = parse_double("source-amp", v); }},
      {"source-pos", "i,j,k", "source cell (default: the centre of the box)",
       [](Options& o, const std::string& v) { o.source_pos = parse_point("source-pos", v); }},
      {"dx", "M", "cell size in metres, used only to convert --source-freq in Hz (default 1e-3)",
       [](Options& o, const std::string& v) { o.dx = parse_double("dx", v); }},
      {"init-mode", "SPEC", "initial field: none, pulse (Gaussian Ez at the source position), or cavity modes "
                            "joined by '+', e.g. TM110+TE101 (TMmn0: Ez; TEm0p: Ey; TE0np: Ex) (default none)",
       [](Options& o, const std::string& v) {
         o.init_mode = v;
         parse_init_mode(v);  // throws on a bad spec
       }},
      {"energy-every", "K", "compute the discrete energy every K steps (MPI_Allreduce), K <= --steps; 0 = only at the end (default 0)",
       [](Options& o, const std::string& v) { o.energy_every = parse_long("energy-every", v, 0, 1000000000L); }},
      {"probe", "i,j,k", "record the probe field at this point every step (repeatable)",
       [](Options& o, const std::string& v) {
         if (o.probes.size() >= 1024) throw UsageError("--probe: at most 1024 probes");
         o.probes.push_back(parse_point("probe", v));
       }},
      {"probe-field", "Ex|Ey|Ez|Hx|Hy|Hz", "component the probes record (default Ez)",
       [](Options& o, const std::string& v) {
         o.probe_field = one_of("probe-field", v, {"Ex", "Ey", "Ez", "Hx", "Hy", "Hz"});
       }},
      {"probe-out", "FILE", "write the probe time series as CSV (step,time,p0,p1,...)",
       [](Options& o, const std::string& v) {
         if (v.empty()) throw UsageError("--probe-out: empty file name");
         o.probe_out = v;
       }},
      {"report", "FILE", "write the JSON report to FILE ('-' = stdout, the default)",
       [](Options& o, const std::string& v) {
         if (v.empty()) throw UsageError("--report: empty file name");
         o.report = v;
       }},
      {"kernel", "fused|split|wavefront", "fused: one sweep updates H and E (fast); split: separate H and E sweeps; "
                                           "wavefront: several time steps per pass over cache-sized tiles (default fused)",
       [](Options& o, const std::string& v) { o.kernel = one_of("kernel", v, {"fused", "split", "wavefront"}); }},
      {"tile", "N", "rows per cache tile in the fused and wavefront kernels, 0 = auto (default 0)",
       [](Options& o, const std::string& v) { o.tile = parse_long("tile", v, 0, kMaxCellsPerAxis); }},
      {"time-block", "auto|T", "wavefront kernel only: time steps per pass (and halo depth with several ranks), "
                               "1..64 (default auto: the cache model's choice)",
       [](Options& o, const std::string& v) {
         o.time_block = v == "auto" ? 0 : parse_long("time-block", v, 1, kMaxTimeBlock);
       }},
      {"output", "none|ascii|binary|hdf5", "field output format (default none); see solver/src/io/README.md",
       [](Options& o, const std::string& v) { o.output = one_of("output", v, {"none", "ascii", "binary", "hdf5"}); }},
      {"output-every", "N", "write the fields after every N-th step (default 1)",
       [](Options& o, const std::string& v) { o.output_every = parse_long("output-every", v, 1, 1000000000L); }},
      {"output-fields", "LIST", "components to write, e.g. ex,ey,hz (default ex,ey,ez,hx,hy,hz)",
       [](Options& o, const std::string& v) { io::set_output_fields(o, v); }},
      {"output-dir", "DIR", "directory for field output, created if missing (default yee-output)",
       [](Options& o, const std::string& v) { o.output_dir = v; }},
      {"output-strategy", "root|root-per-rank|per-rank|shared",
       "root: gather to rank 0, one file; root-per-rank: rank 0 writes one file per rank's block; per-rank: every "
       "rank writes its own file; shared: one HDF5 file written collectively (default root)",
       [](Options& o, const std::string& v) {
         o.output_strategy = one_of("output-strategy", v, {"root", "root-per-rank", "per-rank", "shared"});
       }},
      {"ascii-layout", "indices|coordinates", "ASCII rows: global indices i j k and shortest decimals, or the "
                                              "cell's coordinates x y z in metres and fixed-width exponent "
                                              "notation (paper 001) (default indices)",
       [](Options& o, const std::string& v) { o.ascii_layout = one_of("ascii-layout", v, {"indices", "coordinates"}); }},
      {"hdf5-chunk", "auto|none|CIxCJxCK", "HDF5 chunk shape (auto: chunked only when compressing) (default auto)",
       [](Options& o, const std::string& v) { io::set_hdf5_chunk(o, v); }},
      {"hdf5-compress", "none|deflate[:L]", "HDF5 compression: shuffle + deflate at level L (default none)",
       [](Options& o, const std::string& v) { io::set_hdf5_compress(o, v); }},
      {"hdf5-layout", "components|records", "HDF5 datasets: one per component, or one 3-D dataset whose elements "
                                            "are records of the written components (default components)",
       [](Options& o, const std::string& v) { o.hdf5_layout = one_of("hdf5-layout", v, {"components", "records"}); }},
      {"overwrite", nullptr, "allow writing into a non-empty --output-dir (same-named files are replaced)",
       [](Options& o, const std::string&) { o.overwrite = true; }},
      {"output-fsync", nullptr, "fsync every output file before it gets its final name",
       [](Options& o, const std::string&) { o.output_fsync = true; }},
      {"gpu-per-rank", nullptr, "GPU backends: node-local rank r uses GPU r, error when a node has more ranks "
                                "than visible GPUs (default: GPU = local rank modulo the GPU count, shared)",
       [](Options& o, const std::string&) { o.gpu_per_rank = true; }},
      {"cuda-aware", "auto|on|off", "GPU backends: hand device halo buffers to MPI directly (on), stage them "
                                    "through host memory (off), or ask the MPI library (default auto); a CPU build warns that it has no effect",
       [](Options& o, const std::string& v) {
         o.cuda_aware = one_of("cuda-aware", v, {"auto", "on", "off"});
         o.cuda_aware_given = true;
       }},
      {"threads", "N", "OpenMP threads per rank (default: OMP_NUM_THREADS, else all cores)",
       [](Options& o, const std::string& v) { o.threads = parse_long("threads", v, 1, 4096); }},
      {"quiet", nullptr, "no human-readable summary or progress on stderr",
       [](Options& o, const std::string&) { o.quiet = true; }},
      {"no-progress", nullptr, "no progress line on stderr (the summary stays)",
       [](Options& o, const std::string&) { o.progress = false; }},
      {"config", "FILE", "read flags from FILE (a regular file, at most 1 MiB): 'key = value' lines (INI/TOML style, keys "
                         "are flag names without dashes); command-line flags win",
       [](Options& o, const std::string& v) {
         if (v.empty()) throw UsageError("--config: empty file name");
         o.config = v;
       }},
      {"help", nullptr, "print this help and exit", [](Options& o, const std::string&) { o.help = true; }},
      {"version", nullptr, "print the version and exit", [](Options& o, const std::string&) { o.version = true; }},
  };
  return table;
}

const Flag* find_flag(const std::string& name) {
  for (const auto& f : flags())
    if (name == f.name) return &f;
  return nullptr;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

bool truthy(const std::string& key, const std::string& v) {
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  throw UsageError("config key " + key + ": " + quote(v) + " is not true/false");
}

// --probe adds a point each time it is given; every other option is given at most once
// (per source: the command line overrides the config file).
bool repeatable(const std::string& key) { return key == "probe"; }

bool is_given(const Options& o, const char* key) {
  return std::find(o.given.begin(), o.given.end(), key) != o.given.end();
}

void note_given(Options& o, const std::string& key) {
  if (!is_given(o, key.c_str())) o.given.push_back(key);
}

// key = value lines; [section] headers and #/; comments ignored; values may be quoted;
// a repeatable key (probe) may appear several times, any other key once.
// --n sets every axis, so --n together with --nx/--ny/--nz from the same source (the
// command line, or one config file) is a contradiction, not a precedence question.
void check_axis_conflict(const std::vector<std::string>& keys, const std::string& where) {
  bool all = false;
  std::string axis;
  for (const auto& k : keys) {
    if (k == "n") all = true;
    if ((k == "nx" || k == "ny" || k == "nz") && axis.empty()) axis = k;
  }
  if (all && !axis.empty())
    throw UsageError("--n and --" + axis + " conflict" + where + ": --n sets nx, ny and nz; give --n or --nx/--ny/--nz");
}

constexpr long kMaxConfigBytes = 1L << 20;

void apply_config_file(Options& opt, const std::string& path) {
  // A config is a small regular file: a device (/dev/zero), FIFO or directory is refused
  // before reading, and at most 1 MiB is read.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw UsageError("--config: cannot read " + quote(path) + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw UsageError("--config: " + quote(path) + " is not a regular file");
  if (st.st_size > kMaxConfigBytes) throw UsageError("--config: " + quote(path) + " is larger than 1 MiB");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UsageError("--config: cannot read " + quote(path));
  std::string text(std::size_t(kMaxConfigBytes) + 1, '\0');
  file.read(&text[0], std::streamsize(text.size()));
  if (file.bad()) throw UsageError("--config: cannot read " + quote(path));
  text.resize(std::size_t(file.gcount()));
  if (long(text.size()) > kMaxConfigBytes) throw UsageError("--config: " + quote(path) + " is larger than 1 MiB");
  std::istringstream in(text);
  std::vector<std::string> keys;
  std::vector<long> key_lines;
  std::string line;
  long lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (lineno > 100000) throw UsageError("config " + quote(path) + ": too many lines");
    if (line.find('\0') != std::string::npos)
      throw UsageError("config " + quote(path) + " line " + std::to_string(lineno) + ": not a text file");
    std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t[0] == '[') {
      if (t.back() != ']')
        throw UsageError("config " + quote(path) + " line " + std::to_string(lineno) + ": bad section header");
      continue;
    }
    size_t eq = t.find('=');
    if (eq == std::string::npos)
      throw UsageError("config " + quote(path) + " line " + std::to_string(lineno) + ": expected key = value");
    std::string key = trim(t.substr(0, eq));
    std::string val = trim(t.substr(eq + 1));
    if (!val.empty() && val[0] != '"' && val[0] != '\'') {  // strip a trailing comment
      size_t hash = val.find(" #");
      if (hash != std::string::npos) val = trim(val.substr(0, hash));
    }
    if (val.size() >= 2 && (val[0] == '"' || val[0] == '\'') && val.back() == val[0])
      val = val.substr(1, val.size() - 2);
    for (char& c : key)
      if (c == '_') c = '-';
    const Flag* f = find_flag(key);
    if (!f || key == "config" || key == "help" || key == "version")
      throw UsageError("config " + quote(path) + " line " + std::to_string(lineno) + ": unknown key " + quote(key));
    // A key set twice would silently take its last value: only the repeatable one may.
    for (std::size_t k = 0; k < keys.size() && !repeatable(key); ++k)
      if (keys[k] == key)
        throw UsageError("config " + quote(path) + " line " + std::to_string(lineno) + ": key " + quote(key) +
                         " repeats line " + std::to_string(key_lines[k]) + "; give it once");
    keys.push_back(key);
    key_lines.push_back(lineno);
    if (f->metavar == nullptr) {
      if (truthy(key, val)) f->set(opt, "");
    } else {
      f->set(opt, val);
    }
  }
  check_axis_conflict(keys, " in config " + quote(path));
  for (const auto& k : keys) note_given(opt, k);
}

// --report / --probe-out are written after the run: whatever would make that write fail is
// refused now, before the run's time is spent. A target must be absent or a regular file in
// a directory where we can create files (tried for real: access() says yes to root on a
// read-only or pseudo file system such as /proc), or an existing writable device or FIFO
// (/dev/null, /dev/stdout), which is written into.
void check_writable_target(const std::string& flag, const std::string& path) {
  if (path == "-") return;
  const std::string q = quote(path);
  if (path.back() == '/') throw UsageError(flag + ": " + q + " is a directory");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw UsageError(flag + ": " + q + " is a directory");
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || path.compare(0, 5, "/dev/") == 0) {
      if (::access(path.c_str(), W_OK) != 0) throw UsageError(flag + ": " + q + " is not writable");
      return;
    }
    if (!S_ISREG(st.st_mode)) throw UsageError(flag + ": " + q + " is not a regular file");
  } else if (errno != ENOENT) {
    throw UsageError(flag + ": " + q + ": " + std::strerror(errno));
  }
  std::string dir = ".";
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos) dir = slash == 0 ? "/" : path.substr(0, slash);
  struct stat ds;
  if (::stat(dir.c_str(), &ds) != 0)
    throw UsageError(flag + ": directory of " + q + " is not writable (" + std::strerror(errno) + ")");
  if (!S_ISDIR(ds.st_mode)) throw UsageError(flag + ": directory of " + q + " is not a directory");
  // Every rank tries (ranks on several hosts may share the directory): pid and clock keep
  // the names apart; a name already taken proves nothing either way, so it counts as writable.
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const std::string probe =
      dir + "/.yee-write-test-" + std::to_string(::getpid()) + "-" + std::to_string(long(ts.tv_nsec));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno != EEXIST)
    throw UsageError(flag + ": directory of " + q + " is not writable (" + std::strerror(errno) + ")");
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
  }
}

// Options that act only through another: each is refused when the run as configured
// would ignore it (a forgotten --output, say, must not look like a run that wrote files).
struct Dependency {
  const char* option;
  bool (*acts)(const Options&);
  std::string (*setting)(const Options&);  // what the run has instead, e.g. "with --output none"
  const char* needs;                       // what would make the option act
};

bool writes_fields(const Options& o) { return o.output != "none"; }
bool writes_hdf5(const Options& o) { return o.output == "hdf5"; }
bool writes_ascii(const Options& o) { return o.output == "ascii"; }
bool has_probes(const Options& o) { return !o.probes.empty(); }
bool has_source(const Options& o) { return o.source != "none"; }
bool places_something(const Options& o) { return o.source != "none" || o.init_mode == "pulse"; }
// --dx converts a frequency in Hz, and field files record it (dx_m).
bool uses_dx(const Options& o) { return (o.source != "none" && o.source_freq >= 1.0) || o.output != "none"; }
bool tiles(const Options& o) { return o.kernel != "split"; }
bool wavefront(const Options& o) { return o.kernel == "wavefront"; }
bool shows_progress(const Options& o) { return !o.quiet; }

std::string output_setting(const Options& o) { return "with --output " + o.output; }
std::string probe_setting(const Options&) { return "without --probe"; }
std::string source_setting(const Options& o) { return "with --source " + o.source; }
std::string placing_setting(const Options& o) { return "with --source " + o.source + " and --init-mode " + o.init_mode; }
std::string dx_setting(const Options& o) {
  return std::string(o.source == "none" ? "with --source none" : "with a normalised --source-freq (< 1)") +
         " and --output none";
}
std::string kernel_setting(const Options& o) { return "with --kernel " + o.kernel; }
std::string quiet_setting(const Options&) { return "with --quiet"; }

const Dependency kDependencies[] = {
    {"output-every", writes_fields, output_setting, "it needs --output ascii|binary|hdf5"},
    {"output-fields", writes_fields, output_setting, "it needs --output ascii|binary|hdf5"},
    {"output-dir", writes_fields, output_setting, "it needs --output ascii|binary|hdf5"},
    {"output-strategy", writes_fields, output_setting, "it needs --output ascii|binary|hdf5"},
    {"overwrite", writes_fields, output_setting, "it needs --output ascii|binary|hdf5"},
    {"output-fsync", writes_fields, output_setting, "it needs --output ascii|binary|hdf5"},
    {"ascii-layout", writes_ascii, output_setting, "it needs --output ascii"},
    {"hdf5-chunk", writes_hdf5, output_setting, "it needs --output hdf5"},
    {"hdf5-compress", writes_hdf5, output_setting, "it needs --output hdf5"},
    {"hdf5-layout", writes_hdf5, output_setting, "it needs --output hdf5"},
    {"probe-field", has_probes, probe_setting, "it needs --probe i,j,k"},
    {"probe-out", has_probes, probe_setting, "it needs --probe i,j,k"},
    {"source-freq", has_source, source_setting, "it needs --source ricker|gauss-sine"},
    {"source-amp", has_source, source_setting, "it needs --source ricker|gauss-sine"},
    {"source-pos", places_something, placing_setting, "it needs --source ricker|gauss-sine or --init-mode pulse"},
    {"dx", uses_dx, dx_setting, "it needs a --source-freq in Hz (>= 1), or --output (the files record it)"},
    {"tile", tiles, kernel_setting, "it needs --kernel fused|wavefront"},
    {"time-block", wavefront, kernel_setting, "it needs --kernel wavefront"},
    {"no-progress", shows_progress, quiet_setting, "--quiet hides the progress line already"},
};

void check_dependencies(const Options& o) {
  for (const Dependency& d : kDependencies)
    if (is_given(o, d.option) && !d.acts(o))
      throw UsageError(std::string("--") + d.option + " has no effect " + d.setting(o) + ": " + d.needs);
}

void validate(Options& o) {
  check_dependencies(o);
  const double smax = 1.0 / std::sqrt(3.0);
  if (o.courant == 0.0) o.courant = 0.99 * smax;  // not given (the flag refuses 0)
  if (!(o.courant > 0.0)) throw UsageError("--courant: must be > 0");
  if (o.courant > smax * (1.0 + 1e-12)) {
    char sbuf[32];
    std::snprintf(sbuf, sizeof sbuf, "%.6g", o.courant);
    throw UsageError(std::string("--courant: ") + sbuf + " exceeds the 3D stability limit 1/sqrt(3) = 0.57735");
  }
  if (!(o.dx > 0.0)) throw UsageError("--dx: must be > 0");
  if (!(o.source_freq > 0.0)) throw UsageError("--source-freq: must be > 0");
  o.source_freq_norm = o.source_freq < 1.0 ? o.source_freq : o.source_freq * o.dx / 299792458.0;
  if (o.source_freq_norm > 0.5)
    throw UsageError("--source-freq: " + std::to_string(o.source_freq_norm) +
                     " cycles per dx/c is above the grid's Nyquist limit 0.5");
  if (!(o.source_freq_norm * o.steps * o.courant >= 0.0)) throw UsageError("--source-freq: invalid");
  for (int d = 0; d < 3; ++d) {
    if (o.source_pos[d] < 0) o.source_pos[d] = o.n[d] / 2;
    if (o.source_pos[d] >= o.n[d])
      throw UsageError("--source-pos: index " + std::to_string(o.source_pos[d]) + " is outside the grid (n" +
                       "xyz"[d] + "=" + std::to_string(o.n[d]) + ")");
  }
  for (const auto& p : o.probes)
    for (int d = 0; d < 3; ++d)
      if (p[d] >= o.n[d])
        throw UsageError("--probe: index " + std::to_string(p[d]) + " is outside the grid (n" + "xyz"[d] + "=" +
                         std::to_string(o.n[d]) + ")");
  if (double(o.steps) * double(o.probes.size()) > 1e8)
    throw UsageError("--probe: " + std::to_string(o.probes.size()) + " probes x " + std::to_string(o.steps) +
                     " steps is more than 1e8 samples");
  if (o.probe_out.empty() && !o.probes.empty()) o.probe_out = "probes.csv";
  check_writable_target("--report", o.report);
  if (!o.probe_out.empty()) check_writable_target("--probe-out", o.probe_out);
  if (o.probe_out == o.report && o.report != "-") throw UsageError("--probe-out and --report name the same file");
  io::validate_output(o);
  if (o.energy_every > o.steps)  // like --output-every: the cadence would never be reached
    throw UsageError("--energy-every " + std::to_string(o.energy_every) + " is larger than --steps " +
                     std::to_string(o.steps) + ": the energy would only be computed at the end; use "
                     "--energy-every <= --steps, or 0 for the end only");
  // --gpu-per-rank promises a GPU per rank: a CPU backend cannot keep it. (--cuda-aware
  // only chooses how halo messages travel; main() warns that it has no effect there.)
  if (!YEE_BACKEND_DEVICE_GPU && o.gpu_per_rank)
    throw UsageError(std::string("--gpu-per-rank applies to GPU backends only; this yee has the ") + YEE_BACKEND_NAME +
                     " backend");
  if (o.kernel == "wavefront") {
    if (!YEE_HAVE_WAVEFRONT)
      throw UsageError(std::string("--kernel wavefront: not available with the ") + YEE_BACKEND_NAME + " backend");
    const long smallest = std::min({o.n[0], o.n[1], o.n[2]});
    if (o.time_block > smallest)
      throw UsageError("--time-block " + std::to_string(o.time_block) + " is larger than the grid (smallest extent " +
                       std::to_string(smallest) + " cells)");
    if (o.tile > o.n[1])
      throw UsageError("--tile " + std::to_string(o.tile) + " is larger than the grid (ny=" + std::to_string(o.n[1]) +
                       ")");
  }
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options cli;
  // Pass 1: find --config (command-line flags are applied after the file, so they win).
  std::vector<std::pair<const Flag*, std::string>> given;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      if (arg == "-h") {
        given.push_back({find_flag("help"), ""});
        continue;
      }
      throw UsageError("unexpected argument " + quote(arg) + " (flags start with --; see --help)");
    }
    std::string name = arg.substr(2), value;
    bool has_value = false;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const Flag* f = find_flag(name);
    if (!f) throw UsageError("unknown flag " + quote("--" + name) + " (see --help)");
    if (f->metavar == nullptr) {
      if (has_value) throw UsageError("--" + name + " takes no value");
    } else if (!has_value) {
      if (i + 1 >= argc) throw UsageError("--" + name + " needs a value (" + f->metavar + ")");
      value = argv[++i];
    }
    for (const auto& g : given)  // a flag given twice would silently take its last value
      if (g.first == f && !repeatable(f->name))
        throw UsageError("--" + name + " is given twice" +
                         (f->metavar ? " (" + quote(g.second) + " and " + quote(value) + ")" : std::string()) +
                         "; give it once");
    given.push_back({f, value});
  }
  for (const auto& g : given)
    if (std::string(g.first->name) == "help" || std::string(g.first->name) == "version") g.first->set(cli, g.second);
  if (cli.help || cli.version) return cli;
  for (const auto& g : given)
    if (std::string(g.first->name) == "config") g.first->set(cli, g.second);
  std::vector<std::string> cli_keys;
  for (const auto& g : given) cli_keys.push_back(g.first->name);
  check_axis_conflict(cli_keys, " on the command line");
  Options opt;
  if (!cli.config.empty()) {
    apply_config_file(opt, cli.config);
    opt.config = cli.config;
  }
  // Repeatable flags given on the command line replace the file's list.
  bool cli_probes = false;
  for (const auto& g : given) {
    if (std::string(g.first->name) == "probe" && !cli_probes) {
      opt.probes.clear();
      cli_probes = true;
    }
    g.first->set(opt, g.second);
    note_given(opt, g.first->name);
  }
  validate(opt);
  return opt;
}

void validate_for_ranks(Options& o, int ranks) {
  const double cells = double(o.n[0]) * double(o.n[1]) * double(o.n[2]);
  if (double(ranks) > cells)
    throw UsageError(std::to_string(ranks) + " ranks but only " + std::to_string(long(cells)) + " cells");
  if (o.decomp != "auto") {
    const long prod = o.dims[0] * o.dims[1] * o.dims[2];
    if (prod != ranks)
      throw UsageError("--decomp " + o.decomp + " makes " + std::to_string(prod) + " ranks, but " +
                       std::to_string(ranks) + " are running");
    for (int d = 0; d < 3; ++d)
      if (o.dims[d] > o.n[d])
        throw UsageError("--decomp " + o.decomp + ": " + std::to_string(o.dims[d]) + " ranks along " + "xyz"[d] +
                         " but only " + std::to_string(o.n[d]) + " cells");
  } else {
    o.dims = choose_dims(o.n, ranks);
    if (o.dims[0] == 0)
      throw UsageError("no process grid for " + std::to_string(ranks) + " ranks fits a " + std::to_string(o.n[0]) +
                       "x" + std::to_string(o.n[1]) + "x" + std::to_string(o.n[2]) + " grid");
  }
  // Wavefront: a pass of T steps reads a T-deep halo from each neighbour, which must own T layers.
  if (o.kernel == "wavefront" && o.time_block > 0)
    for (int d = 0; d < 3; ++d)
      if (o.dims[d] > 1 && o.n[d] / o.dims[d] < o.time_block)
        throw UsageError("--time-block " + std::to_string(o.time_block) + ": halos " + std::to_string(o.time_block) +
                         " cells deep are deeper than the smallest subdomain (" + std::to_string(o.n[d] / o.dims[d]) +
                         " cells along " + "xyz"[d] + " with " + std::to_string(o.dims[d]) + " ranks)");
}

std::string help_text() {
  std::ostringstream s;
  s << "usage: yee [--flag value | --flag=value]...\n"
       "Hybrid MPI + OpenMP 3D FDTD (Yee) solver in a hollow PEC box. Launch with mpirun for several ranks.\n"
       "Units are normalised (c = 1, cell size 1, dt = courant). Prints one JSON report (schema yee-report v1).\n\n";
  for (const auto& f : flags()) {
    std::string lhs = std::string("  --") + f.name + (f.metavar ? std::string(" ") + f.metavar : "");
    s << lhs;
    if (lhs.size() < 30)
      s << std::string(30 - lhs.size(), ' ');
    else
      s << "\n" << std::string(30, ' ');
    s << f.help << "\n";
  }
  s << "\nAn option that would change nothing in the run as configured is an error (e.g. --output-dir without\n"
       "--output, --probe-field without --probe, --source-freq with --source none), and so is one given twice\n"
       "(--probe excepted); the command line overrides the config file.\n";
  s << "\nExit codes: 0 ok, 2 bad input (one line 'yee: error: ...' on stderr; also a run that would not fit\n"
       "the memory limit of its node: RAM, cgroup, SLURM_MEM_PER_NODE), 1 runtime failure (e.g. a full disk)\n"
       "or invalid result. SIGTERM, SIGINT and SIGHUP remove yee's temporary files before the process ends.\n"
       "Threads follow OMP_NUM_THREADS unless --threads is given.\n";
  return s.str();
}

}  // namespace yee
