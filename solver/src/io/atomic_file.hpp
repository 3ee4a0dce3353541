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
