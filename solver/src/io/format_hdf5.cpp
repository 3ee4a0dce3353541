// HDF5 output: one dataset per component (/ex, /ey, ...), or with --hdf5-layout records one
// dataset /fields of records (see write_records), float32/float64, C order
// (i slowest, k fastest), optional chunking with shuffle + deflate. Attributes on the
// file's root group: step, time (E), time_h, dt, dx, dx_m, global_shape, offset; on each
// dataset: time (its own level: E at step*dt, H half a step earlier).
#include "io/formats.hpp"

#ifdef YEE_HAVE_HDF5
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "io/atomic_file.hpp"
#include "io/collective.hpp"
#include "io/io_options.hpp"
#include "io/temp_registry.hpp"
#endif

namespace yee {
namespace io {

#ifdef YEE_HAVE_HDF5
namespace {

template <typename T> hid_t h5type();
template <> hid_t h5type<float>() { return H5T_NATIVE_FLOAT; }
template <> hid_t h5type<double>() { return H5T_NATIVE_DOUBLE; }

// One HDF5 identifier, closed when it goes out of scope on every path (an error included):
// an identifier left open keeps its file open, and HDF5 1.10 then crashes closing it at exit.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  ~Handle() { release(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  herr_t release() {  // closes now; the result of the close
    herr_t r = 0;
    if (id_ >= 0) r = close_(id_);
    id_ = -1;
    return r;
  }

 private:
  hid_t id_;
  Closer close_;
};

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

template <typename V>
void attr(Status& st, hid_t obj, const char* name, hid_t type, const V* v, hsize_t n) {
  Handle sp(st.check(H5Screate_simple(1, &n, nullptr), "describe an attribute of"), H5Sclose);
  if (!sp.ok()) return;
  Handle a(st.check(H5Acreate2(obj, name, type, sp.get(), H5P_DEFAULT, H5P_DEFAULT), "create an attribute in"),
           H5Aclose);
  if (a.ok()) st.check(H5Awrite(a.get(), type, v), "write an attribute to");
  if (a.ok()) st.check(a.release(), "close an attribute of");
}

void root_attributes(Status& st, hid_t file, const Frame& fr, const Block& b) {
  const double dx = 1.0;
  attr(st, file, "step", H5T_NATIVE_LONG, &fr.step, 1);
  attr(st, file, "time", H5T_NATIVE_DOUBLE, &fr.time_e, 1);
  attr(st, file, "time_h", H5T_NATIVE_DOUBLE, &fr.time_h, 1);
  attr(st, file, "dt", H5T_NATIVE_DOUBLE, &fr.dt, 1);
  attr(st, file, "dx", H5T_NATIVE_DOUBLE, &dx, 1);
  attr(st, file, "dx_m", H5T_NATIVE_DOUBLE, &fr.dx_m, 1);
  attr(st, file, "global_shape", H5T_NATIVE_LONG, fr.gn, 3);
  attr(st, file, "offset", H5T_NATIVE_LONG, b.off, 3);
  const long ranks = fr.ranks;
  attr(st, file, "ranks", H5T_NATIVE_LONG, &ranks, 1);
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
// In a shared file every rank makes the same calls whatever failed locally (they are
// collective); in an own file the first failure stops the writing.
template <typename T>
void write_datasets(Status& st, hid_t file, const Frame& fr, const Block& b, const hsize_t* dims,
                    bool off_in_file, hid_t dxpl, const std::vector<const T*>& data) {
  Handle dcpl(make_dcpl(st, fr, dims), H5Pclose);
  const hsize_t count[3] = {hsize_t(b.n[0]), hsize_t(b.n[1]), hsize_t(b.n[2])};
  for (std::size_t c = 0; c < fr.comps.size(); ++c) {
    if (!off_in_file && !st.err.empty()) return;
    const int comp = fr.comps[c];
    Handle fsp(st.check(H5Screate_simple(3, dims, nullptr), "describe a dataset of"), H5Sclose);
    Handle ds(st.check(H5Dcreate2(file, component_name(comp), h5type<T>(), fsp.get(), H5P_DEFAULT, dcpl.get(),
                                  H5P_DEFAULT),
                       "create a dataset in"),
              H5Dclose);
    Handle msp(st.check(H5Screate_simple(3, count, nullptr), "describe memory for"), H5Sclose);
    if (off_in_file && fsp.ok()) {
      const hsize_t start[3] = {hsize_t(b.off[0]), hsize_t(b.off[1]), hsize_t(b.off[2])};
      st.check(H5Sselect_hyperslab(fsp.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), "select a block of");
    }
    if (ds.ok()) st.check(H5Dwrite(ds.get(), h5type<T>(), msp.get(), fsp.get(), dxpl, data[c]), "write");
    const double t = component_time(fr, comp);
    if (ds.ok()) attr(st, ds.get(), "time", H5T_NATIVE_DOUBLE, &t, 1);
    if (ds.ok()) st.check(ds.release(), "close a dataset of");
  }
}

// Records layout (paper 001): one 3-D dataset "fields" shaped like the block whose every
// element is a record, an HDF5 array of the written components in frame order (float32 or
// float64). The components are interleaved into one buffer (cell-major) and written at once;
// the same chunking and filters apply. The dataset's attribute "components" names the
// record's members ("ex,ey,ez,hx,hy,hz"); "time" is E's level and "time_h" H's.
template <typename T>
void write_records(Status& st, hid_t file, const Frame& fr, const Block& b, const hsize_t* dims,
                   const std::vector<const T*>& data) {
  const std::size_t nc = fr.comps.size(), cells = std::size_t(b.cells());
  std::vector<T> rec;
  try {
    rec.resize(nc * cells);
  } catch (const std::bad_alloc&) {
    if (st.err.empty()) st.err = "cannot hold the records of " + *st.path + " in memory";
    return;
  }
  for (std::size_t x = 0; x < cells; ++x)
    for (std::size_t c = 0; c < nc; ++c) rec[x * nc + c] = data[c][x];
  const hsize_t len = hsize_t(nc);
  Handle type(st.check(H5Tarray_create2(h5type<T>(), 1, &len), "describe the records of"), H5Tclose);
  Handle dcpl(make_dcpl(st, fr, dims), H5Pclose);
  Handle fsp(st.check(H5Screate_simple(3, dims, nullptr), "describe a dataset of"), H5Sclose);
  if (!type.ok() || !st.err.empty()) return;
  Handle ds(st.check(H5Dcreate2(file, "fields", type.get(), fsp.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                     "create a dataset in"),
            H5Dclose);
  if (ds.ok()) st.check(H5Dwrite(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rec.data()), "write");
  std::string names;
  for (int c : fr.comps) names += (names.empty() ? "" : ",") + std::string(component_name(c));
  if (ds.ok()) {
    // a scalar fixed-length string (h5py reads it as bytes)
    Handle str(st.check(H5Tcopy(H5T_C_S1), "describe an attribute of"), H5Tclose);
    if (str.ok()) st.check(H5Tset_size(str.get(), names.size() + 1), "describe an attribute of");  // NUL-terminated
    Handle sp(st.check(H5Screate(H5S_SCALAR), "describe an attribute of"), H5Sclose);
    Handle a(str.ok() && sp.ok() ? st.check(H5Acreate2(ds.get(), "components", str.get(), sp.get(), H5P_DEFAULT,
                                                       H5P_DEFAULT), "create an attribute in")
                                 : -1,
             H5Aclose);
    if (a.ok()) st.check(H5Awrite(a.get(), str.get(), names.c_str()), "write an attribute to");
    if (a.ok()) st.check(a.release(), "close an attribute of");
    attr(st, ds.get(), "time", H5T_NATIVE_DOUBLE, &fr.time_e, 1);
    attr(st, ds.get(), "time_h", H5T_NATIVE_DOUBLE, &fr.time_h, 1);
    st.check(ds.release(), "close a dataset of");
  }
}

// HDF5 1.10 cannot recover from a failed H5Fclose: the file stays half-closed and the
// library crashes closing it again at exit (inside MPI_Finalize). A close fails when the
// metadata it flushes cannot be written, so after an error the temporary (which is thrown
// away anyway) is first emptied through our own descriptor: that returns its blocks to the
// file system and the close's few metadata writes fit again.
void release_space(int fd) {
  if (fd >= 0 && ::ftruncate(fd, 0) != 0) { /* nothing more to free */ }
}

// Without /proc: the temporary we created must still be the file HDF5 opened.
bool same_file(int fd, const std::string& path) {
  struct stat a, b;
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

void quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

template <typename T>
std::string write_hdf5(const std::string& path, const Frame& fr, const Block& b, const std::vector<const T*>& data,
                       Tally& tally) {
  // Without compression the size is known: a file that cannot fit is refused before HDF5
  // writes a byte (the emptying below is the second line of defence).
  if (fr.deflate < 0) {
    double need = 16384.0;  // metadata: superblock, headers, attributes
    for (std::size_t c = 0; c < fr.comps.size(); ++c) need += double(sizeof(T)) * double(b.cells());
    const std::string room = check_free_space(path, need);
    if (!room.empty()) return room;
  }
  TempFile tmp = create_temp(path, fr.tag);
  if (tmp.fd < 0) return tmp.error;
  Status st{"", &path};
  errno = 0;
  // HDF5 opens files by name: give it our descriptor's /proc link where there is one, so
  // it opens exactly the file we created, whatever is put under the name meanwhile.
  const std::string by_fd = "/proc/self/fd/" + std::to_string(tmp.fd);
  const std::string& name = ::access(by_fd.c_str(), F_OK) == 0 ? by_fd : tmp.path;
  Handle file(st.check(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "create"), H5Fclose);
  if (file.ok() && &name == &tmp.path && !same_file(tmp.fd, tmp.path) && st.err.empty())
    st.err = "cannot create " + path + ": its temporary file was replaced while it was opened";
  if (file.ok() && st.err.empty()) {
    const hsize_t dims[3] = {hsize_t(b.n[0]), hsize_t(b.n[1]), hsize_t(b.n[2])};
    root_attributes(st, file.get(), fr, b);
    if (fr.records)
      write_records<T>(st, file.get(), fr, b, dims, data);
    else
      write_datasets<T>(st, file.get(), fr, b, dims, false, H5P_DEFAULT, data);
  }
  if (file.ok()) {
    if (!st.err.empty()) release_space(tmp.fd);
    errno = 0;
    st.check(file.release(), "finish");
  }
  if (st.err.empty()) st.err = commit_temp(tmp, path, fr.fsync);
  if (!st.err.empty()) {
    discard_temp(tmp);
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
  // A failed collective close cannot be recovered from (see release_space), so a file that
  // cannot fit is refused up front, and after any error the temporary is emptied first.
  std::string room;
  if (rank == 0) {
    double need = 16384.0;  // metadata: superblock, headers, attributes
    for (std::size_t c = 0; c < fr.comps.size(); ++c) need += double(sizeof(T)) * fr.gn[0] * fr.gn[1] * fr.gn[2];
    room = check_free_space(path, need * 1.02);
  }
  int no_room = room.empty() ? 0 : 1;
  MPI_Bcast(&no_room, 1, MPI_INT, 0, comm);
  if (no_room) return room;
  // Rank 0 creates the temporary (exclusively, under a unique name) and tells the others.
  TempFile tmp;
  if (rank == 0) tmp = create_temp(path, fr.tag);
  const std::string created = broadcast(comm, rank == 0 ? (tmp.fd >= 0 ? "" : tmp.error) : std::string(), 0);
  if (!created.empty()) return created;
  const std::string tmp_path = broadcast(comm, rank == 0 ? tmp.path : std::string(), 0);
  Status st{"", &path};
  errno = 0;
  // Every rank makes the same sequence of calls whatever fails locally, so no rank is
  // left waiting in a collective; the verdict is agreed afterwards.
  Handle fapl(st.check(H5Pcreate(H5P_FILE_ACCESS), "set up"), H5Pclose);
  if (fapl.ok()) st.check(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL), "use MPI-IO for");
  // Metadata reads and writes as collectives too: fewer small, serialised operations.
  if (fapl.ok()) st.check(H5Pset_all_coll_metadata_ops(fapl.get(), true), "use collective metadata for");
  if (fapl.ok()) st.check(H5Pset_coll_metadata_write(fapl.get(), true), "use collective metadata for");
  // Open MPI's MPI-IO (OMPIO) probes file locking while it opens: each rank creates and
  // removes TEMP.locktest.<rank> beside the temporary. A signal in that window must not leave
  // it behind, so it is listed like our own temporaries until the open is over.
  const int lock_probe = register_temp(tmp_path + ".locktest." + std::to_string(rank));
  Handle file(st.check(H5Fcreate(tmp_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), "create"), H5Fclose);
  unregister_temp(lock_probe);
  fapl.release();
  int opened = file.ok() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &opened, 1, MPI_INT, MPI_MIN, comm);
  if (opened) {
    Handle dxpl(st.check(H5Pcreate(H5P_DATASET_XFER), "set up a transfer to"), H5Pclose);
    // Collective transfers: required for filtered (compressed) parallel writes, and the
    // fast path for large contiguous ones.
    if (dxpl.ok()) st.check(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "request collective I/O for");
    const Block whole{{0, 0, 0}, {fr.gn[0], fr.gn[1], fr.gn[2]}};
    root_attributes(st, file.get(), fr, whole);
    const hsize_t dims[3] = {hsize_t(fr.gn[0]), hsize_t(fr.gn[1]), hsize_t(fr.gn[2])};
    write_datasets<T>(st, file.get(), fr, mine, dims, true, dxpl.get(), data);
  }
  if (file.ok()) {
    int bad = st.err.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
    if (bad && rank == 0) release_space(tmp.fd);
    if (bad) MPI_Barrier(comm);  // emptied before anyone flushes
    errno = 0;
    st.check(file.release(), "finish");
  }
  std::string err = st.err;
  int bad = err.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
  if (!bad && rank == 0) err = commit_temp(tmp, path, fr.fsync);
  if (bad && rank == 0) discard_temp(tmp);
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
