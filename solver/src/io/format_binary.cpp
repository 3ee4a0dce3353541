// Raw binary output: the arrays exactly as in memory (little-endian IEEE on every host
// we support; the header states the byte order it was written with) plus a JSON header.
#include <cstdio>

#include "io/atomic_file.hpp"
#include "io/formats.hpp"
#include "io/io_options.hpp"

namespace yee {
namespace io {
namespace {

bool little_endian() {
  const unsigned one = 1;
  return *reinterpret_cast<const unsigned char*>(&one) == 1;
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string triple(const long* v) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + "]";
}

std::string num(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

}  // namespace

template <typename T>
std::string write_binary(const std::string& base, const Frame& fr, const Block& b, const std::vector<const T*>& data,
                         Tally& tally) {
  const std::size_t comp_bytes = sizeof(T) * std::size_t(b.cells());
  {
    AtomicFile bin(base + ".bin", fr.tag, fr.fsync);
    for (const T* d : data)
      if (!bin.write(d, comp_bytes)) return bin.error();
    const std::string err = bin.commit();
    if (!err.empty()) return err;
    tally.bytes += bin.bytes();
    tally.files += 1;
  }
  std::string comps, offsets;
  for (std::size_t c = 0; c < fr.comps.size(); ++c) {
    comps += std::string(c ? ", " : "") + "\"" + component_name(fr.comps[c]) + "\"";
    offsets += std::string(c ? ", " : "") + std::to_string(c * comp_bytes);
  }
  const std::string dtype = std::string(little_endian() ? "<" : ">") + (sizeof(T) == 4 ? "f4" : "f8");
  const std::string json =
      "{\"format\": \"yee-raw\", \"version\": 1, \"data_file\": \"" + base_name(base) + ".bin\", \"step\": " +
      std::to_string(fr.step) + ", \"time_e\": " + num(fr.time_e) + ", \"time_h\": " + num(fr.time_h) +
      ", \"dt\": " + num(fr.dt) + ", \"dx_m\": " + num(fr.dx_m) + ", \"dtype\": \"" + dtype +
      "\", \"order\": \"C\", \"shape\": " + triple(b.n) + ", \"global_shape\": " + triple(fr.gn) +
      ", \"offset\": " + triple(b.off) + ", \"rank\": " + (fr.rank < 0 ? "null" : std::to_string(fr.rank)) +
      ", \"ranks\": " + std::to_string(fr.ranks) + ", \"components\": [" + comps + "], \"component_offsets\": [" +
      offsets + "], \"component_bytes\": " + std::to_string(comp_bytes) + "}\n";
  AtomicFile head(base + ".json", fr.tag, fr.fsync);
  if (!head.write(json.data(), json.size())) return head.error();
  const std::string err = head.commit();
  if (err.empty()) {
    tally.bytes += head.bytes();
    tally.files += 1;
  }
  return err;
}

template std::string write_binary<float>(const std::string&, const Frame&, const Block&,
                                         const std::vector<const float*>&, Tally&);
template std::string write_binary<double>(const std::string&, const Frame&, const Block&,
                                          const std::vector<const double*>&, Tally&);

}  // namespace io
}  // namespace yee
