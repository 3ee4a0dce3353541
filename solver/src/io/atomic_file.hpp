#pragma once
// Files that appear under their final name only when complete: written as
// DIR/.NAME.tmp-TAG, optionally fsync'ed, then renamed. Errors are returned as text
// naming the file and the system's reason (e.g. "No space left on device").
#include <cstddef>
#include <string>

namespace yee {
namespace io {

// Temporary name beside `final_path` (hidden, so a reader never mistakes it for output).
std::string temp_path(const std::string& final_path, const std::string& tag);

// Renames tmp to final_path (after fsync when asked); on failure removes tmp and
// returns the reason; "" on success.
std::string commit_file(const std::string& tmp, const std::string& final_path, bool fsync);

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
  std::string final_, tmp_, error_;
  int fd_ = -1;
  bool fsync_ = false, done_ = false;
  double bytes_ = 0.0;
};

}  // namespace io
}  // namespace yee
