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
#include <utility>
#include <vector>

#include "io/atomic_file.hpp"
#include "io/collective.hpp"
#include "io/hdf5_guarded_driver.hpp"
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
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
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

// Why the HDF5 call that just failed failed, in the system's words: its drivers record the
// error text ("error message = 'No space left on device'") or the MPI error string on the
// error stack; errno itself is often overwritten by then. "" when the stack says neither.
herr_t find_cause(unsigned, const H5E_error2_t* e, void* out) {
  std::string& cause = *static_cast<std::string*>(out);
  if (!cause.empty() || !e->desc) return 0;
  const std::string d = e->desc;
  const char* keys[] = {"error message = '", "MPI Error String: "};
  for (const char* key : keys) {
    const std::size_t at = d.find(key);
    if (at == std::string::npos) continue;
    const std::size_t from = at + std::strlen(key);
    const std::size_t to = key[std::strlen(key) - 1] == '\'' ? d.find('\'', from) : d.size();
    cause = d.substr(from, to == std::string::npos ? std::string::npos : to - from);
    return 1;
  }
  return 0;
}

std::string failure_cause() {
  std::string cause;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_cause, &cause);
  return cause;
}

// Remembers the first failing HDF5 call (with the cause, which names e.g. a full disk). The
// temporary is thrown away after an error, but HDF5 1.10 must still close it, and it cannot
// survive a write that fails inside a flush or a close (its metadata cache is left
// half-flushed, the close fails, the identifier stays registered while the object behind it
// is freed, and the library crashes closing it again at exit, inside MPI_Finalize). A file
// of one process is written through the guarded driver, which never lets a write fail.
// A shared file goes through MPI-IO: there the first error diverts this process's
// descriptors on the temporary to memory (divert_descriptors), and agree() spreads a
// failure to every rank before the next collective call, so that the flush and the closes
// that follow write to memory and succeed.
struct Status {
  std::string err;
  const std::string* path;  // the final name, for messages
  std::string temp;         // the file HDF5 writes
  MPI_Comm comm = MPI_COMM_NULL;
  bool abandoned = false;

  hid_t check(hid_t id, const char* what) {
    if (id < 0 && err.empty()) {
      const std::string cause = failure_cause();
      fail("HDF5 cannot " + std::string(what) + " " + *path + (cause.empty() ? "" : ": " + cause));
    }
    return id;
  }
  void fail(const std::string& why) {
    if (err.empty()) err = why;
    abandon();
  }
  void abandon() {
    if (!abandoned && !temp.empty()) divert_descriptors(temp);
    abandoned = true;
  }
  // Shared file: true when any rank has failed (then every rank has abandoned the file).
  // Collective; a no-op for a file of one process.
  bool agree() {
    int bad = err.empty() ? 0 : 1;
    if (comm != MPI_COMM_NULL) MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
    if (bad) abandon();
    return bad != 0;
  }
  // Whether to make the next HDF5 call: not after a failure (for a shared file, a failure
  // on any rank, so that every rank skips the same collective calls). Collective when shared.
  bool proceed() { return comm == MPI_COMM_NULL ? err.empty() : !agree(); }
};

// File access: STRONG close degree, so that closing the file closes whatever of it is still
// open and the file is really closed then (never later, at library shutdown).
hid_t make_fapl(Status& st) {
  const hid_t fapl = st.check(H5Pcreate(H5P_FILE_ACCESS), "set up");
  if (fapl >= 0) st.check(H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG), "set the close degree of");
  return fapl;
}

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
// collective); in an own file the first failure stops the writing. The datasets stay open
// (in `open`): a dataset's close writes what it still caches, and a failed close is what
// HDF5 cannot survive, so everything is written by one flush of the file first (finish_file).
template <typename T>
void write_datasets(Status& st, hid_t file, const Frame& fr, const Block& b, const hsize_t* dims,
                    bool off_in_file, hid_t dxpl, const std::vector<const T*>& data, std::vector<Handle>& open) {
  Handle dcpl(make_dcpl(st, fr, dims), H5Pclose);
  const hsize_t count[3] = {hsize_t(b.n[0]), hsize_t(b.n[1]), hsize_t(b.n[2])};
  for (std::size_t c = 0; c < fr.comps.size(); ++c) {
    if (!st.proceed()) return;
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
    const bool go = st.proceed();
    if (go) st.check(H5Dwrite(ds.get(), h5type<T>(), msp.get(), fsp.get(), dxpl, data[c]), "write");
    const double t = component_time(fr, comp);
    if (go && st.proceed()) attr(st, ds.get(), "time", H5T_NATIVE_DOUBLE, &t, 1);
    if (ds.ok()) open.push_back(std::move(ds));
  }
}

// Records layout (paper 001): one 3-D dataset "fields" shaped like the block whose every
// element is a record, an HDF5 array of the written components in frame order (float32 or
// float64). The components are interleaved into one buffer (cell-major) and written at once;
// the same chunking and filters apply. The dataset's attribute "components" names the
// record's members ("ex,ey,ez,hx,hy,hz"); "time" is E's level and "time_h" H's.
template <typename T>
void write_records(Status& st, hid_t file, const Frame& fr, const Block& b, const hsize_t* dims,
                   const std::vector<const T*>& data, std::vector<Handle>& open) {
  const std::size_t nc = fr.comps.size(), cells = std::size_t(b.cells());
  std::vector<T> rec;
  try {
    rec.resize(nc * cells);
  } catch (const std::bad_alloc&) {
    st.fail("cannot hold the records of " + *st.path + " in memory");
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
    open.push_back(std::move(ds));  // closed by finish_file, as in write_datasets
  }
}

// Ends a file: one flush writes what HDF5 still caches (the datasets' chunks, every header,
// the superblock) while a failure can still be survived (a failed flush leaves the file
// intact; a failed close does not); after a failure anywhere the file is abandoned to memory
// (every rank's, for a shared file); then the datasets and the file are closed, with
// nothing left to write. The file's handle is released here.
void finish_file(Status& st, Handle& file, std::vector<Handle>& datasets) {
  if (!st.agree()) st.check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "write");  // collective when shared
  st.agree();
  for (Handle& d : datasets) st.check(d.release(), "close a dataset of");
  datasets.clear();
  st.check(file.release(), "finish");
}

}  // namespace

void quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

template <typename T>
std::string write_hdf5(const std::string& path, const Frame& fr, const Block& b, const std::vector<const T*>& data,
                       Tally& tally) {
  // A file that cannot fit is refused before HDF5 writes a byte: without compression its
  // size is known; with it, at least the metadata must fit. Any write can still fail (the
  // disk may fill meanwhile, or a quota end it): the guarded driver keeps that from HDF5,
  // whose close then always succeeds, and the file is thrown away with the cause.
  double need = 16384.0;  // metadata: superblock, headers, attributes
  if (fr.deflate < 0)
    for (std::size_t c = 0; c < fr.comps.size(); ++c) need += double(sizeof(T)) * double(b.cells());
  const std::string room = check_free_space(path, need);
  if (!room.empty()) return room;
  TempFile tmp = create_temp(path, fr.tag);
  if (tmp.fd < 0) return tmp.error;
  Status st{"", &path, "", MPI_COMM_NULL, false};  // no diversion: the driver drops writes itself
  guarded::Outcome disk;
  // The driver writes to our descriptor: exactly the file we created, whatever is put
  // under its name meanwhile.
  Handle fapl(make_fapl(st), H5Pclose);
  if (fapl.ok()) st.check(guarded::use_driver(fapl.get(), tmp.fd, &disk), "set up the file driver for");
  Handle file(fapl.ok() && st.err.empty()
                  ? st.check(H5Fcreate(tmp.path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), "create")
                  : -1,
              H5Fclose);
  fapl.release();
  std::vector<Handle> datasets;  // declared after the file: closed before it on every path
  if (file.ok() && st.err.empty()) {
    const hsize_t dims[3] = {hsize_t(b.n[0]), hsize_t(b.n[1]), hsize_t(b.n[2])};
    root_attributes(st, file.get(), fr, b);
    if (fr.records)
      write_records<T>(st, file.get(), fr, b, dims, data, datasets);
    else
      write_datasets<T>(st, file.get(), fr, b, dims, false, H5P_DEFAULT, data, datasets);
  }
  if (file.ok()) finish_file(st, file, datasets);
  if (disk.error)  // the cause, whatever HDF5 made of the writes it never saw
    st.err = "cannot write " + path + ": " + std::strerror(disk.error);
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
  // A file that cannot fit is refused up front (its uncompressed size: compression is
  // not known in advance), and once created its space is reserved: MPI-IO may not report
  // a failed write at all (Open MPI's fcoll components drop pwritev errors), so the writes
  // must not be able to fail for want of space. Any other failure is agreed by every rank
  // before the next collective call.
  double need = 16384.0;  // metadata: superblock, headers, attributes
  for (std::size_t c = 0; c < fr.comps.size(); ++c) need += double(sizeof(T)) * fr.gn[0] * fr.gn[1] * fr.gn[2];
  need *= 1.02;
  std::string room;
  if (rank == 0) room = check_free_space(path, need);
  int no_room = room.empty() ? 0 : 1;
  MPI_Bcast(&no_room, 1, MPI_INT, 0, comm);
  if (no_room) return room;
  // Rank 0 creates the temporary (exclusively, under a unique name) and tells the others.
  TempFile tmp;
  if (rank == 0) tmp = create_temp(path, fr.tag);
  const std::string created = broadcast(comm, rank == 0 ? (tmp.fd >= 0 ? "" : tmp.error) : std::string(), 0);
  if (!created.empty()) return created;
  const std::string tmp_path = broadcast(comm, rank == 0 ? tmp.path : std::string(), 0);
  Status st{"", &path, tmp_path, comm};
  // Every rank makes the same sequence of calls whatever fails locally, so no rank is
  // left waiting in a collective; the verdict is agreed afterwards.
  Handle fapl(make_fapl(st), H5Pclose);
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
  std::vector<Handle> datasets;  // declared after the file: closed before it on every path
  int opened = file.ok() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &opened, 1, MPI_INT, MPI_MIN, comm);
  if (opened && rank == 0) {  // after the create, which truncates the file
    const std::string reserved = reserve_space(tmp.fd, path, need);
    if (!reserved.empty()) st.fail(reserved);
  }
  if (opened && st.proceed()) {
    Handle dxpl(st.check(H5Pcreate(H5P_DATASET_XFER), "set up a transfer to"), H5Pclose);
    // Collective transfers: required for filtered (compressed) parallel writes, and the
    // fast path for large contiguous ones.
    if (dxpl.ok()) st.check(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "request collective I/O for");
    const Block whole{{0, 0, 0}, {fr.gn[0], fr.gn[1], fr.gn[2]}};
    root_attributes(st, file.get(), fr, whole);
    const hsize_t dims[3] = {hsize_t(fr.gn[0]), hsize_t(fr.gn[1]), hsize_t(fr.gn[2])};
    write_datasets<T>(st, file.get(), fr, mine, dims, true, dxpl.get(), data, datasets);
  }
  if (file.ok()) finish_file(st, file, datasets);
  std::string err = st.err;
  int bad = err.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
  if (!bad && rank == 0) {
    release_reserve(tmp.fd);  // compressed: the blocks it did not need
    err = commit_temp(tmp, path, fr.fsync);
  }
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
