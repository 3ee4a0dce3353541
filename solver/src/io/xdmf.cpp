#include "io/xdmf.hpp"

#include <cstdio>
#include <sstream>

#include "io/io_options.hpp"

namespace yee {
namespace io {
namespace {

void grid(std::ostringstream& x, const std::string& name, const XdmfPiece& p, const std::vector<int>& comps,
          int precision, bool records, const char* indent, const char* time) {
  const Block& b = p.block;
  const std::string dims = std::to_string(b.n[0]) + " " + std::to_string(b.n[1]) + " " + std::to_string(b.n[2]);
  x << indent << "<Grid Name=\"" << name << "\" GridType=\"Uniform\">\n";
  if (time) x << indent << "  <Time Value=\"" << time << "\"/>\n";
  x << indent << "  <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << dims << "\"/>\n"
    << indent << "  <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
    << indent << "    <DataItem Format=\"XML\" Dimensions=\"3\">" << b.off[0] << " " << b.off[1] << " " << b.off[2]
    << "</DataItem>\n"
    << indent << "    <DataItem Format=\"XML\" Dimensions=\"3\">1 1 1</DataItem>\n"
    << indent << "  </Geometry>\n";
  if (records)  // one array-typed dataset: each node carries a record of comps.size() values
    x << indent << "  <Attribute Name=\"fields\" AttributeType=\"Matrix\" Center=\"Node\">\n"
      << indent << "    <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"" << precision
      << "\" Dimensions=\"" << dims << " " << comps.size() << "\">" << p.file << ":/fields</DataItem>\n"
      << indent << "  </Attribute>\n";
  for (int c : records ? std::vector<int>() : comps)
    x << indent << "  <Attribute Name=\"" << component_name(c) << "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
      << indent << "    <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"" << precision
      << "\" Dimensions=\"" << dims << "\">" << p.file << ":/" << component_name(c) << "</DataItem>\n"
      << indent << "  </Attribute>\n";
  x << indent << "</Grid>\n";
}

}  // namespace

std::string xdmf_text(const std::vector<XdmfStep>& steps, const std::vector<int>& comps, int precision,
                      bool records) {
  std::ostringstream x;
  x << "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n"
    << "    <Grid Name=\"fields\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const XdmfStep& s : steps) {
    char t[40];
    std::snprintf(t, sizeof t, "%.17g", s.time);
    const std::string name = "step " + std::to_string(s.step);
    if (s.pieces.size() == 1) {
      grid(x, name, s.pieces[0], comps, precision, records, "      ", t);
    } else {
      x << "      <Grid Name=\"" << name << "\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
        << "        <Time Value=\"" << t << "\"/>\n";
      for (std::size_t r = 0; r < s.pieces.size(); ++r)
        grid(x, "rank " + std::to_string(r), s.pieces[r], comps, precision, records, "        ", nullptr);
      x << "      </Grid>\n";
    }
  }
  x << "    </Grid>\n  </Domain>\n</Xdmf>\n";
  return x.str();
}

}  // namespace io
}  // namespace yee
