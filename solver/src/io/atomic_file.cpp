#include "io/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "io/temp_registry.hpp"

namespace yee {
namespace io {
namespace {

// Six characters that differ between calls, processes and hosts sharing a directory.
std::string unique_suffix(unsigned attempt) {
  static std::atomic<unsigned long> counter{0};
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 30) ^
                         ((unsigned long long)getpid() << 16) ^ (counter.fetch_add(1) * 0x9E3779B97F4A7C15ULL) ^
                         attempt;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string s(6, 'a');
  for (char& c : s) {
    c = alphabet[x % 62];
    x /= 62;
  }
  return s;
}

}  // namespace

TempFile create_temp(const std::string& final_path, const std::string& tag) {
  const std::size_t slash = final_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : final_path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? final_path : final_path.substr(slash + 1);
  TempFile t;
  for (unsigned attempt = 0; attempt < 100; ++attempt) {
    t.path = dir + "." + base + ".tmp-" + tag + "-" + unique_suffix(attempt);
    // Listed before it exists: a signal between open() and the listing would leave it.
    t.slot = register_temp(t.path);
    t.fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (t.fd >= 0) return t;
    const int e = errno;
    unregister_temp(t.slot);
    t.slot = -1;
    if (e != EEXIST) {
      t.error = "cannot create " + final_path + ": " + std::strerror(e);
      return t;
    }
  }
  t.error = "cannot create " + final_path + ": no unused temporary name";
  return t;
}

void discard_temp(TempFile& t) {
  if (t.fd >= 0) ::close(t.fd);
  t.fd = -1;
  if (!t.path.empty()) ::unlink(t.path.c_str());
  unregister_temp(t.slot);
  t.slot = -1;
  t.path.clear();
}

std::string commit_temp(TempFile& t, const std::string& final_path, bool fsync) {
  std::string err;
  if (fsync) {
    const int fd = t.fd >= 0 ? t.fd : ::open(t.path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) err = "cannot fsync " + final_path + ": " + std::strerror(errno);
    if (fd >= 0 && fd != t.fd) ::close(fd);
  }
  if (t.fd >= 0 && ::close(t.fd) != 0 && err.empty())
    err = "cannot write " + final_path + ": " + std::strerror(errno);  // NFS reports ENOSPC at close
  t.fd = -1;
  if (err.empty() && std::rename(t.path.c_str(), final_path.c_str()) != 0)
    err = "cannot rename the temporary file to " + final_path + ": " + std::strerror(errno);
  if (!err.empty()) {
    discard_temp(t);
    return err;
  }
  unregister_temp(t.slot);
  t.slot = -1;
  t.path.clear();
  return "";
}

int divert_descriptors(const std::string& path) {
  struct stat target;
  if (path.empty() || ::stat(path.c_str(), &target) != 0) return 0;
  std::vector<int> fds;  // this process's open descriptors (listed first: the sink adds one)
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') fds.push_back(std::atoi(e->d_name));
    ::closedir(d);
  } else {  // no /proc: every number up to the descriptor limit (bounded)
    struct rlimit rl;
    const long top = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? long(rl.rlim_cur) : 65536;
    for (int fd = 0; fd < top; ++fd) fds.push_back(fd);
  }
  int sink = -1, diverted = 0;
  for (int fd : fds) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || st.st_dev != target.st_dev || st.st_ino != target.st_ino) continue;
    if (sink < 0) {
#ifdef MFD_CLOEXEC
      sink = ::memfd_create("yee-abandoned-output", MFD_CLOEXEC);
#endif
      if (sink < 0) sink = ::open("/dev/null", O_RDWR | O_CLOEXEC);  // writes succeed there too
      if (sink < 0) return diverted;
    }
    if (::dup2(sink, fd) >= 0) ++diverted;
  }
  if (sink >= 0) ::close(sink);
  return diverted;
}

std::string reserve_space(int fd, const std::string& final_path, double bytes) {
#ifdef FALLOC_FL_KEEP_SIZE
  if (fd < 0 || bytes <= 0) return "";
  if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, off_t(bytes)) == 0) return "";
  const int e = errno;
  if (e == EOPNOTSUPP || e == ENOSYS || e == EINVAL) return "";  // not on this file system
  return "cannot write " + final_path + ": " + std::strerror(e) + " (reserving " + std::to_string(long(bytes / 1024)) +
         " KiB)";
#else
  (void)fd; (void)final_path; (void)bytes;
  return "";
#endif
}

void release_reserve(int fd) {
  struct stat st;  // truncating to its own size frees the blocks reserved past the end
  if (fd >= 0 && ::fstat(fd, &st) == 0 && ::ftruncate(fd, st.st_size) != 0) { /* kept: only space */ }
}

std::string check_free_space(const std::string& path, double bytes) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  struct statvfs fs;
  if (::statvfs(dir.c_str(), &fs) != 0) return "";  // unknown: let the write report it
  const double avail = double(fs.f_bavail) * double(fs.f_frsize);
  if (avail >= bytes) return "";
  return "cannot write " + path + ": No space left on device (needs about " + std::to_string(long(bytes / 1024)) +
         " KiB, " + std::to_string(long(avail / 1024)) + " KiB free)";
}

double file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? double(st.st_size) : -1.0;
}

AtomicFile::AtomicFile(const std::string& final_path, const std::string& tag, bool fsync)
    : final_(final_path), tmp_(create_temp(final_path, tag)), fsync_(fsync) {
  error_ = tmp_.error;
}

AtomicFile::~AtomicFile() {
  if (!done_) discard_temp(tmp_);
}

bool AtomicFile::write(const void* data, std::size_t bytes) {
  if (!error_.empty()) return false;
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t w = ::write(tmp_.fd, p, bytes);
    if (w < 0) {
      if (errno == EINTR) continue;
      error_ = "cannot write " + final_ + ": " + std::strerror(errno);
      return false;
    }
    p += w;
    bytes -= std::size_t(w);
    bytes_ += double(w);
  }
  return true;
}

std::string AtomicFile::commit() {
  if (!error_.empty()) return error_;
  error_ = commit_temp(tmp_, final_, fsync_);
  if (error_.empty()) done_ = true;
  return error_;
}

}  // namespace io
}  // namespace yee
