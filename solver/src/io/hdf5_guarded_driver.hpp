#pragma once
// An HDF5 file driver (POSIX pread/pwrite on a descriptor we own, like HDF5's sec2) that
// never reports a write error to HDF5: the first failure is kept in an Outcome (its errno)
// and every later write is dropped. HDF5 1.10 cannot survive a failed write inside a
// metadata flush (the cache is left half-flushed, every later flush fails, the close fails,
// and the library then crashes at exit, inside MPI_Finalize); with this driver its flushes
// and its close always succeed, and the writer, which throws the file away when the
// Outcome says so, reports the cause. Included by format_hdf5.cpp only (one process per
// file; the shared file of several ranks goes through MPI-IO).
#include <hdf5.h>
#if defined(__has_include)
#if __has_include(<H5FDdevelop.h>)
#include <H5FDdevelop.h>  // HDF5 >= 1.13: the driver interface moved out of H5FDpublic.h
#endif
#endif
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace yee {
namespace io {
namespace guarded {

struct Outcome {
  int error = 0;  // errno of the first failed write or truncation; 0: none
};

struct Config {  // the driver's file-access information (copied by HDF5 with memcpy)
  int fd;
  Outcome* outcome;
};

struct File {
  H5FD_t pub;  // first: HDF5 sees the driver's files as H5FD_t
  int fd;
  Outcome* outcome;
  haddr_t eoa, eof;
  dev_t dev;
  ino_t ino;
};

inline void failed(File* f, int err) {
  if (f->outcome->error == 0) f->outcome->error = err ? err : EIO;
}

inline H5FD_t* open_file(const char*, unsigned flags, hid_t fapl, haddr_t) {
  const Config* cfg = static_cast<const Config*>(H5Pget_driver_info(fapl));
  if (!cfg || cfg->fd < 0) return nullptr;
  File* f = static_cast<File*>(std::calloc(1, sizeof(File)));
  if (!f) return nullptr;
  f->fd = ::dup(cfg->fd);  // HDF5 closes its copy; the writer keeps the original
  f->outcome = cfg->outcome;
  struct stat st;
  if (f->fd < 0 || ::fstat(f->fd, &st) != 0 || ((flags & H5F_ACC_TRUNC) && ::ftruncate(f->fd, 0) != 0)) {
    if (f->fd >= 0) ::close(f->fd);
    std::free(f);
    return nullptr;
  }
  f->eof = (flags & H5F_ACC_TRUNC) ? 0 : haddr_t(st.st_size);
  f->dev = st.st_dev;
  f->ino = st.st_ino;
  return &f->pub;
}

inline herr_t close_file(H5FD_t* file) {
  File* f = reinterpret_cast<File*>(file);
  ::close(f->fd);  // the data is written by pwrite: a close reports nothing more
  std::free(f);
  return 0;
}

inline int compare(const H5FD_t* a, const H5FD_t* b) {
  const File* x = reinterpret_cast<const File*>(a);
  const File* y = reinterpret_cast<const File*>(b);
  if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
  if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
  return 0;
}

inline herr_t query(const H5FD_t*, unsigned long* flags) {
  if (flags)  // what sec2 declares: metadata and small raw data are gathered into larger writes
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA;
  return 0;
}

inline haddr_t get_eoa(const H5FD_t* file, H5FD_mem_t) { return reinterpret_cast<const File*>(file)->eoa; }
inline herr_t set_eoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  reinterpret_cast<File*>(file)->eoa = addr;
  return 0;
}
inline haddr_t get_eof(const H5FD_t* file, H5FD_mem_t) { return reinterpret_cast<const File*>(file)->eof; }

inline herr_t get_handle(H5FD_t* file, hid_t, void** handle) {
  *handle = &reinterpret_cast<File*>(file)->fd;
  return 0;
}

// Reads past the end of the file, or of what a failure kept out of it, give zeros.
inline herr_t read(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size, void* buf) {
  File* f = reinterpret_cast<File*>(file);
  char* p = static_cast<char*>(buf);
  while (size > 0) {
    const ssize_t n = ::pread(f->fd, p, size, off_t(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0) failed(f, errno);
      std::memset(p, 0, size);
      break;
    }
    p += n;
    addr += haddr_t(n);
    size -= size_t(n);
  }
  return 0;
}

inline herr_t write(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size, const void* buf) {
  File* f = reinterpret_cast<File*>(file);
  const haddr_t end = addr + size;
  const char* p = static_cast<const char*>(buf);
  while (size > 0 && f->outcome->error == 0) {  // after a failure: dropped
    const ssize_t n = ::pwrite(f->fd, p, size, off_t(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed(f, n < 0 ? errno : ENOSPC);
      break;
    }
    p += n;
    addr += haddr_t(n);
    size -= size_t(n);
  }
  if (end > f->eof) f->eof = end;
  return 0;
}

// The file ends where HDF5's allocations end (it may have freed space at the end).
inline herr_t truncate(H5FD_t* file, hid_t, hbool_t) {
  File* f = reinterpret_cast<File*>(file);
  if (f->eoa == f->eof) return 0;
  if (f->outcome->error == 0 && ::ftruncate(f->fd, off_t(f->eoa)) != 0) failed(f, errno);
  f->eof = f->eoa;
  return 0;
}

inline hid_t driver_id() {
  static hid_t id = -1;
  if (id >= 0 && H5Iis_valid(id) > 0) return id;  // registered (again after an H5close)
  static H5FD_class_t cls;
  std::memset(&cls, 0, sizeof cls);
#ifdef H5FD_CLASS_VERSION
  cls.version = H5FD_CLASS_VERSION;
  cls.value = H5FD_class_value_t(0x1ee);  // user drivers: 256..511
#endif
  cls.name = "yee_guarded";
  cls.maxaddr = (haddr_t(1) << (8 * sizeof(off_t) - 1)) - 1;
  cls.fc_degree = H5F_CLOSE_WEAK;
  cls.fapl_size = sizeof(Config);
  cls.open = open_file;
  cls.close = close_file;
  cls.cmp = compare;
  cls.query = query;
  cls.get_eoa = get_eoa;
  cls.set_eoa = set_eoa;
  cls.get_eof = get_eof;
  cls.get_handle = get_handle;
  cls.read = read;
  cls.write = write;
  cls.truncate = truncate;
  const H5FD_mem_t map[H5FD_MEM_NTYPES] = H5FD_FLMAP_DICHOTOMY;
  for (int t = 0; t < H5FD_MEM_NTYPES; ++t) cls.fl_map[t] = map[t];
  id = H5FDregister(&cls);
  return id;
}

// Makes `fapl` write through this driver to `fd` (which stays the caller's), the
// outcome kept in *outcome. Returns HDF5's result (< 0: failure).
inline herr_t use_driver(hid_t fapl, int fd, Outcome* outcome) {
  const hid_t id = driver_id();
  if (id < 0) return -1;
  const Config cfg{fd, outcome};
  return H5Pset_driver(fapl, id, &cfg);
}

}  // namespace guarded
}  // namespace io
}  // namespace yee
