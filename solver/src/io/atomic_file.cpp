#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace yee {
namespace io {

std::string temp_path(const std::string& final_path, const std::string& tag) {
  const std::size_t slash = final_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : final_path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? final_path : final_path.substr(slash + 1);
  return dir + "." + base + ".tmp-" + tag;
}

std::string commit_file(const std::string& tmp, const std::string& final_path, bool fsync) {
  std::string err;
  if (fsync) {
    const int fd = ::open(tmp.c_str(), O_RDONLY);
    if (fd < 0 || ::fsync(fd) != 0) err = "cannot fsync " + final_path + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
  }
  if (err.empty() && std::rename(tmp.c_str(), final_path.c_str()) != 0)
    err = "cannot rename the temporary file to " + final_path + ": " + std::strerror(errno);
  if (!err.empty()) ::unlink(tmp.c_str());
  return err;
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
    : final_(final_path), tmp_(temp_path(final_path, tag)), fsync_(fsync) {
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) error_ = "cannot create " + final_ + ": " + std::strerror(errno);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!done_) ::unlink(tmp_.c_str());
}

bool AtomicFile::write(const void* data, std::size_t bytes) {
  if (!error_.empty()) return false;
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t w = ::write(fd_, p, bytes);
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
  if (error_.empty() && fsync_ && ::fsync(fd_) != 0) error_ = "cannot fsync " + final_ + ": " + std::strerror(errno);
  if (fd_ >= 0 && ::close(fd_) != 0 && error_.empty())
    error_ = "cannot write " + final_ + ": " + std::strerror(errno);  // NFS reports ENOSPC at close
  fd_ = -1;
  if (error_.empty() && std::rename(tmp_.c_str(), final_.c_str()) != 0)
    error_ = "cannot rename the temporary file to " + final_ + ": " + std::strerror(errno);
  if (error_.empty()) done_ = true;
  return error_;
}

}  // namespace io
}  // namespace yee
