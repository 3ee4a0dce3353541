#include "io/io_options.hpp"

#include <cctype>
#include <cstdlib>
#include <vector>

#ifdef YEE_HAVE_HDF5
#include <hdf5.h>
#endif

namespace yee {
namespace io {
namespace {

std::vector<std::string> split_any(const std::string& s, const std::string& seps) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (seps.find(c) != std::string::npos)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

std::string show(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (static_cast<unsigned char>(c) < 32 || c == 127) ? '?' : c;
  if (out.size() > 60) out = out.substr(0, 57) + "...";
  return out + "'";
}

}  // namespace

const char* component_name(int comp) {
  static const char* names[] = {"ex", "ey", "ez", "hx", "hy", "hz"};
  return names[comp];
}

void set_output_fields(Options& o, const std::string& v) {
  std::vector<int> ids;
  for (std::string part : split_any(v, ",")) {
    for (char& c : part) c = char(std::tolower(static_cast<unsigned char>(c)));
    int id = -1;
    for (int c = 0; c < 6; ++c)
      if (part == component_name(c)) id = c;
    if (id < 0) throw UsageError("--output-fields: " + show(part) + " is not one of ex,ey,ez,hx,hy,hz");
    for (int seen : ids)
      if (seen == id) throw UsageError("--output-fields: " + part + " is named twice");
    ids.push_back(id);
  }
  o.output_fields = ids;
}

void set_hdf5_compress(Options& o, const std::string& v) {
  if (v == "none") {
    o.hdf5_deflate = -1;
    return;
  }
  if (v == "deflate") {
    o.hdf5_deflate = 4;
    return;
  }
  if (v.compare(0, 8, "deflate:") == 0 && v.size() == 9 && std::isdigit(static_cast<unsigned char>(v[8]))) {
    o.hdf5_deflate = v[8] - '0';
    return;
  }
  throw UsageError("--hdf5-compress: " + show(v) + " is not none, deflate or deflate:LEVEL (LEVEL 0-9)");
}

void set_hdf5_chunk(Options& o, const std::string& v) {
  if (v == "auto" || v == "none") {
    o.hdf5_chunk = v;
    return;
  }
  auto parts = split_any(v, "x,");
  bool ok = parts.size() == 3;
  for (const auto& p : parts) {
    char* end = nullptr;
    const long x = p.empty() ? 0 : std::strtol(p.c_str(), &end, 10);
    ok = ok && end && *end == '\0' && x >= 1 && x <= (1L << 20);
  }
  if (!ok) throw UsageError("--hdf5-chunk: " + show(v) + " is not auto, none or CIxCJxCK (positive integers)");
  o.hdf5_chunk = v;
}

void validate_output(const Options& o) {
  if (o.output == "none") return;
  if (o.output_dir.empty()) throw UsageError("--output-dir: empty directory name");
  if (o.output_fields.empty()) throw UsageError("--output-fields: no component named");
  if (o.output_every > o.steps)  // no step would be written: an empty directory that looks like success
    throw UsageError("--output-every " + std::to_string(o.output_every) + " is larger than --steps " +
                     std::to_string(o.steps) + ": no step would be written; use --output-every <= --steps");
  if (o.output == "hdf5" && !have_hdf5())
    throw UsageError("--output hdf5: this yee was built without HDF5 (install libhdf5-openmpi-dev, build with "
                     "-DYEE_HDF5=ON)");
  if (o.output_strategy == "shared") {
    if (o.output != "hdf5")
      throw UsageError("--output-strategy shared: writes one file with parallel HDF5, so it needs --output hdf5");
    if (!have_parallel_hdf5())
      throw UsageError("--output-strategy shared: this yee was built with serial HDF5 (" +
                       std::string(hdf5_build_kind()) +
                       "); rebuild against a parallel HDF5 (Debian libhdf5-openmpi-dev) or use root|root-per-rank|per-rank");
  }
  if (o.hdf5_layout == "records" && o.output_strategy == "shared")
    throw UsageError("--hdf5-layout records: written by one process per file (root, root-per-rank or per-rank), not shared");
  if (o.hdf5_deflate >= 0 && o.hdf5_chunk == "none")
    throw UsageError("--hdf5-compress deflate needs chunked datasets: drop --hdf5-chunk none");
}

bool have_hdf5() {
#ifdef YEE_HAVE_HDF5
  return true;
#else
  return false;
#endif
}

bool have_parallel_hdf5() {
#if defined(YEE_HAVE_HDF5) && defined(H5_HAVE_PARALLEL)
  return true;
#else
  return false;
#endif
}

const char* hdf5_build_kind() {
#ifdef YEE_HAVE_HDF5
#ifdef H5_HAVE_PARALLEL
  return "parallel " H5_VERSION;
#else
  return "serial " H5_VERSION;
#endif
#else
  return "none";
#endif
}

}  // namespace io
}  // namespace yee
