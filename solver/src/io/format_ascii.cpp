// ASCII output: slow and large on purpose of comparison (paper 001), but exact: every
// value reads back to the same float/double.
//
// Two row layouts. `indices` (default): "i j k <components>", shortest decimals (a zero
// field is one character). `coordinates`, paper 001's: "The 6 fields of Ex, Ey, Ez, Hx,
// Hy and Hz at each FDTD grid point are outputted together with the Cartesian coordinate
// at each time step" -- x y z (the cell's corner, index x dx in metres) then the fields.
// The paper names no number format; ours is signed exponent notation with the digits
// that round-trip (%+.8e float, always 15 characters; %+.16e double), so a file's size is
// set by the grid alone, as the paper's "data file size in ASCII" reads.
#include <charconv>
#include <cmath>
#include <cstdio>

#include "io/atomic_file.hpp"
#include "io/formats.hpp"
#include "io/io_options.hpp"

namespace yee {
namespace io {

template <typename T>
std::string write_ascii(const std::string& path, const Frame& fr, const Block& b, const std::vector<const T*>& data,
                        Tally& tally) {
  AtomicFile file(path, fr.tag, fr.fsync);
  if (!file.error().empty()) return file.error();
  char head[512];
  std::snprintf(head, sizeof head,
                "# yee fields ascii v1: step %ld time_e %.17g time_h %.17g dt %.17g dx_m %.17g dtype %s\n"
                "# grid %ld %ld %ld block_offset %ld %ld %ld block_shape %ld %ld %ld\n# columns: %s",
                fr.step, fr.time_e, fr.time_h, fr.dt, fr.dx_m, TypeName<T>::numpy(), fr.gn[0], fr.gn[1], fr.gn[2],
                b.off[0], b.off[1], b.off[2], b.n[0], b.n[1], b.n[2], fr.coordinates ? "x_m y_m z_m" : "i j k");
  std::string buf = head;
  for (int c : fr.comps) buf += std::string(" ") + component_name(c);
  buf += "\n";
  const std::size_t flush_at = 1 << 20;
  buf.reserve(flush_at + 512);
  char line[512];
  const int digits = sizeof(T) == 4 ? 8 : 16;  // after the point: 9 or 17 significant digits
  // printf's "%+.*e" (to_chars is specified as printf in the C locale), about 5 times as fast
  auto fixed = [digits](char* p, char* end, double v) {
    if (!std::signbit(v)) *p++ = '+';
    return std::to_chars(p, end, v, std::chars_format::scientific, digits).ptr;
  };
  long q = 0;
  for (long i = 0; i < b.n[0]; ++i)
    for (long j = 0; j < b.n[1]; ++j)
      for (long k = 0; k < b.n[2]; ++k, ++q) {
        char* p = line;
        char* end = line + sizeof line;
        const long at[3] = {b.off[0] + i, b.off[1] + j, b.off[2] + k};
        for (int a = 0; a < 3; ++a) {
          if (a) *p++ = ' ';
          p = fr.coordinates ? fixed(p, end, double(at[a]) * fr.dx_m) : std::to_chars(p, end, at[a]).ptr;
        }
        for (const T* d : data) {
          *p++ = ' ';
          p = fr.coordinates ? fixed(p, end, double(d[q])) : std::to_chars(p, end, d[q]).ptr;
        }
        *p++ = '\n';
        buf.append(line, std::size_t(p - line));
        if (buf.size() >= flush_at) {
          if (!file.write(buf.data(), buf.size())) return file.error();
          buf.clear();
        }
      }
  if (!file.write(buf.data(), buf.size())) return file.error();
  const std::string err = file.commit();
  if (err.empty()) {
    tally.bytes += file.bytes();
    tally.files += 1;
  }
  return err;
}

template std::string write_ascii<float>(const std::string&, const Frame&, const Block&,
                                        const std::vector<const float*>&, Tally&);
template std::string write_ascii<double>(const std::string&, const Frame&, const Block&,
                                         const std::vector<const double*>&, Tally&);

}  // namespace io
}  // namespace yee
