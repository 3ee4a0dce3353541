// HDF5 output: one dataset per component (/ex, /ey, ...), float32/float64, C order
// (i slowest, k fastest), optional chunking with shuffle + deflate. Attributes on the
// file's root group: step, time (E), time_h, dt, dx, dx_m, global_shape, offset; on each
// dataset: time (its own level: E at step*dt, H half a step earlier).
#include "io/formats.hpp"

#ifdef YEE_HAVE_HDF5
#include <hdf5.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "io/atomic_file.hpp"
#include "io/io_options.hpp"
#endif

namespace yee {
namespace io {

#ifdef YEE_HAVE_HDF5
namespace {

template <typename T> hid_t h5type();
template <> hid_t h5type<float>() { return H5T_NATIVE_FLOAT; }
template <> hid_t h5type<double>() { return H5T_NATIVE_DOUBLE; }

// Remembers the first failing HDF5 call (with errno, which names e.g. a full disk).
struct Status {
  std::string err;
  const std::string* path;
  hid_t check(hid_t id, const char* what) {
    if (id < 0 && err.empty())
      err = "HDF5 cannot " + std::string(what) + " " + *path + (errno ? std::string(": ") + std::strerror(errno) : "");
    return id;
  }
};

void attr_doubles(Status& st, hid_t obj, const char* name, const double* v, hsize_t n) {
  hid_t sp = st.check(H5Screate_simple(1, &n, nullptr), "describe an attribute of");
  hid_t a = st.check(H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT), "create an attribute in");
  if (a >= 0) st.check(H5Awrite(a, H5T_NATIVE_DOUBLE, v), "write an attribute to");
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
}

void attr_longs(Status& st, hid_t obj, const char* name, const long* v, hsize_t n) {
  hid_t sp = st.check(H5Screate_simple(1, &n, nullptr), "describe an attribute of");
  hid_t a = st.check(H5Acreate2(obj, name, H5T_NATIVE_LONG, sp, H5P_DEFAULT, H5P_DEFAULT), "create an attribute in");
  if (a >= 0) st.check(H5Awrite(a, H5T_NATIVE_LONG, v), "write an attribute to");
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
}

void root_attributes(Status& st, hid_t file, const Frame& fr, const Block& b) {
  const double dx = 1.0;
  attr_longs(st, file, "step", &fr.step, 1);
  attr_doubles(st, file, "time", &fr.time_e, 1);
  attr_doubles(st, file, "time_h", &fr.time_h, 1);
  attr_doubles(st, file, "dt", &fr.dt, 1);
  attr_doubles(st, file, "dx", &dx, 1);
  attr_doubles(st, file, "dx_m", &fr.dx_m, 1);
  attr_longs(st, file, "global_shape", fr.gn, 3);
  attr_longs(st, file, "offset", b.off, 3);
  const long ranks = fr.ranks;
  attr_longs(st, file, "ranks", &ranks, 1);
}

// Dataset creation properties: chunk shape clamped to the dataset, shuffle + deflate.
hid_t make_dcpl(Status& st, const Frame& fr, const hsize_t* dims) {
  hid_t dcpl = st.check(H5Pcreate(H5P_DATASET_CREATE), "set up a dataset in");
  if (dcpl < 0 || fr.chunk[0] <= 0) return dcpl;
  hsize_t chunk[3];
  for (int a = 0; a < 3; ++a) chunk[a] = std::min<hsize_t>(hsize_t(fr.chunk[a]), dims[a]);
  st.check(H5Pset_chunk(dcpl, 3, chunk), "chunk a dataset in");
  if (fr.deflate >= 0) {
    st.check(H5Pset_shuffle(dcpl), "set the shuffle filter in");
    st.check(H5Pset_deflate(dcpl, unsigned(fr.deflate)), "set the deflate filter in");
  }
  return dcpl;
}

// Creates and writes every component; the file dataspace is `dims`, this process's part
// is block b at b.off (shared file) or the whole dataset (own file, off_in_file = false).
template <typename T>
void write_datasets(Status& st, hid_t file, const Frame& fr, const Block& b, const hsize_t* dims,
                    bool off_in_file, hid_t dxpl, const std::vector<const T*>& data) {
  hid_t dcpl = make_dcpl(st, fr, dims);
  const hsize_t count[3] = {hsize_t(b.n[0]), hsize_t(b.n[1]), hsize_t(b.n[2])};
  for (std::size_t c = 0; c < fr.comps.size(); ++c) {
    const int comp = fr.comps[c];
    hid_t fsp = st.check(H5Screate_simple(3, dims, nullptr), "describe a dataset of");
    hid_t ds = st.check(H5Dcreate2(file, component_name(comp), h5type<T>(), fsp, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                        "create a dataset in");
    hid_t msp = st.check(H5Screate_simple(3, count, nullptr), "describe memory for");
    if (off_in_file && fsp >= 0) {
      const hsize_t start[3] = {hsize_t(b.off[0]), hsize_t(b.off[1]), hsize_t(b.off[2])};
      st.check(H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, nullptr, count, nullptr), "select a block of");
    }
    if (ds >= 0) st.check(H5Dwrite(ds, h5type<T>(), msp, fsp, dxpl, data[c]), "write");
    const double t = component_time(fr, comp);
    if (ds >= 0) attr_doubles(st, ds, "time", &t, 1);
    if (msp >= 0) H5Sclose(msp);
    if (ds >= 0) st.check(H5Dclose(ds), "close a dataset of");
    if (fsp >= 0) H5Sclose(fsp);
  }
  if (dcpl >= 0) H5Pclose(dcpl);
}

}  // namespace

void quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

template <typename T>
std::string write_hdf5(const std::string& path, const Frame& fr, const Block& b, const std::vector<const T*>& data,
                       Tally& tally) {
  const std::string tmp = temp_path(path, fr.tag);
  Status st{"", &path};
  errno = 0;
  hid_t file = st.check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "create");
  if (file >= 0) {
    const hsize_t dims[3] = {hsize_t(b.n[0]), hsize_t(b.n[1]), hsize_t(b.n[2])};
    root_attributes(st, file, fr, b);
    write_datasets<T>(st, file, fr, b, dims, false, H5P_DEFAULT, data);
    st.check(H5Fclose(file), "finish");
  }
  if (st.err.empty()) st.err = commit_file(tmp, path, fr.fsync);
  if (!st.err.empty()) {
    std::remove(tmp.c_str());
    return st.err;
  }
  tally.bytes += file_size(path);
  tally.files += 1;
  return "";
}

template <typename T>
std::string write_hdf5_shared(MPI_Comm comm, const std::string& path, const Frame& fr, const Block& mine,
                              const std::vector<const T*>& data, Tally& tally) {
#ifdef H5_HAVE_PARALLEL
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::string tmp = temp_path(path, fr.tag);
  // HDF5 1.10 cannot recover from a failed collective close (the file stays open and
  // H5close crashes in MPI_Finalize), so a file that cannot fit is refused up front.
  std::string room;
  if (rank == 0) {
    double need = 16384.0;  // metadata: superblock, headers, attributes
    for (std::size_t c = 0; c < fr.comps.size(); ++c) need += double(sizeof(T)) * fr.gn[0] * fr.gn[1] * fr.gn[2];
    room = check_free_space(path, need * 1.02);
  }
  int no_room = room.empty() ? 0 : 1;
  MPI_Bcast(&no_room, 1, MPI_INT, 0, comm);
  if (no_room) return room;
  Status st{"", &path};
  errno = 0;
  // Every rank makes the same sequence of calls whatever fails locally, so no rank is
  // left waiting in a collective; the verdict is agreed afterwards.
  hid_t fapl = st.check(H5Pcreate(H5P_FILE_ACCESS), "set up");
  if (fapl >= 0) st.check(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), "use MPI-IO for");
  // Metadata reads and writes as collectives too: fewer small, serialised operations.
  if (fapl >= 0) st.check(H5Pset_all_coll_metadata_ops(fapl, true), "use collective metadata for");
  if (fapl >= 0) st.check(H5Pset_coll_metadata_write(fapl, true), "use collective metadata for");
  hid_t file = st.check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "create");
  if (fapl >= 0) H5Pclose(fapl);
  if (file >= 0) {
    hid_t dxpl = st.check(H5Pcreate(H5P_DATASET_XFER), "set up a transfer to");
    // Collective transfers: required for filtered (compressed) parallel writes, and the
    // fast path for large contiguous ones.
    if (dxpl >= 0) st.check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "request collective I/O for");
    const Block whole{{0, 0, 0}, {fr.gn[0], fr.gn[1], fr.gn[2]}};
    root_attributes(st, file, fr, whole);
    const hsize_t dims[3] = {hsize_t(fr.gn[0]), hsize_t(fr.gn[1]), hsize_t(fr.gn[2])};
    write_datasets<T>(st, file, fr, mine, dims, true, dxpl, data);
    if (dxpl >= 0) H5Pclose(dxpl);
    st.check(H5Fclose(file), "finish");
  }
  std::string err = st.err;
  int bad = err.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
  if (!bad && rank == 0) err = commit_file(tmp, path, fr.fsync);
  if (bad && rank == 0) std::remove(tmp.c_str());
  if (err.empty() && !bad && rank == 0) {
    tally.bytes += file_size(path);
    tally.files += 1;
  }
  return err;
#else
  (void)comm; (void)path; (void)fr; (void)mine; (void)data; (void)tally;
  return "this yee was built without parallel HDF5";
#endif
}

#else  // no HDF5 in this build: validate_output() refuses --output hdf5 before we get here

void quiet_hdf5() {}

template <typename T>
std::string write_hdf5(const std::string&, const Frame&, const Block&, const std::vector<const T*>&, Tally&) {
  return "this yee was built without HDF5";
}

template <typename T>
std::string write_hdf5_shared(MPI_Comm, const std::string&, const Frame&, const Block&, const std::vector<const T*>&,
                              Tally&) {
  return "this yee was built without parallel HDF5";
}

#endif

template std::string write_hdf5<float>(const std::string&, const Frame&, const Block&,
                                       const std::vector<const float*>&, Tally&);
template std::string write_hdf5<double>(const std::string&, const Frame&, const Block&,
                                        const std::vector<const double*>&, Tally&);
template std::string write_hdf5_shared<float>(MPI_Comm, const std::string&, const Frame&, const Block&,
                                              const std::vector<const float*>&, Tally&);
template std::string write_hdf5_shared<double>(MPI_Comm, const std::string&, const Frame&, const Block&,
                                               const std::vector<const double*>&, Tally&);

}  // namespace io
}  // namespace yee
