#pragma once
// Files that appear under their final name only when complete: written as a hidden
// DIR/.NAME.tmp-TAG-XXXXXX (created with O_CREAT|O_EXCL|O_NOFOLLOW under a unique name, so
// it can be neither an existing file nor a planted symlink), optionally fsync'ed, then
// renamed. Every temporary is listed for the signal handler (temp_registry.hpp) while it
// exists. Errors are returned as text naming the file and the system's reason (e.g. "No
// space left on device").
#include <cstddef>
#include <string>

namespace yee {
namespace io {

// A new temporary beside `final_path`: creates it exclusively (mode 0644 less the umask),
// lists it for the signal handler. On failure fd = -1 and error() says why.
struct TempFile {
  std::string path;
  int fd = -1;
  int slot = -1;
  std::string error;
};
TempFile create_temp(const std::string& final_path, const std::string& tag);
// Closes (if open), unlinks and unlists the temporary.
void discard_temp(TempFile& t);

// Renames t.path to final_path (after fsync when asked) and unlists it; on failure removes
// the temporary and returns the reason; "" on success. Closes t.fd if still open.
std::string commit_temp(TempFile& t, const std::string& final_path, bool fsync);

// Points every descriptor this process holds on the file at `path` (its own, and those a
// library opened by name: HDF5, MPI-IO) at an anonymous in-memory file, so that whatever
// the library still writes before it closes the file (a flush on close) succeeds and goes
// nowhere. For a temporary that is being thrown away after a write error: a library whose
// close fails on a full disk may be left in a state it cannot leave (HDF5 1.10). Returns how
// many descriptors were diverted.
int divert_descriptors(const std::string& path);

// Reserves `bytes` of disk for the file open as `fd` (its size stays as it is): the writes
// that follow cannot then find the disk full or the quota spent. "" when reserved, or when
// the file system cannot reserve (nothing is promised then); else the reason, naming
// `final_path`. release_reserve() gives back what the file did not use (past its end).
std::string reserve_space(int fd, const std::string& final_path, double bytes);
void release_reserve(int fd);

// "" when the file system holding `path` has `bytes` free, else a message naming both.
std::string check_free_space(const std::string& path, double bytes);

// Size of a file in bytes, or -1.
double file_size(const std::string& path);

class AtomicFile {
 public:
  AtomicFile(const std::string& final_path, const std::string& tag, bool fsync);
  ~AtomicFile();  // an uncommitted file is removed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  bool write(const void* data, std::size_t bytes);  // false (and error()) on failure
  std::string commit();                             // "" or the error; the file is final after ""
  const std::string& error() const { return error_; }
  double bytes() const { return bytes_; }

 private:
  std::string final_, error_;
  TempFile tmp_;
  bool fsync_ = false, done_ = false;
  double bytes_ = 0.0;
};

}  // namespace io
}  // namespace yee
