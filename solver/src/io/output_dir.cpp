#include "io/output_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/collective.hpp"

namespace yee {
namespace io {
namespace {

long count_entries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return -1;
  long n = 0;
  while (const dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++n;
  ::closedir(d);
  return n;
}

// mkdir -p; "" or the reason.
std::string make_dirs(const std::string& path) {
  std::string cur;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return std::strerror(errno);
  }
  return "";
}

std::string check_dir(const Options& o) {
  const std::string& dir = o.output_dir;
  const std::string flag = "--output-dir " + dir;
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return flag + " exists and is not a directory";
    const long n = count_entries(dir);
    if (n < 0) return flag + " cannot be read: " + std::strerror(errno);
    if (n > 0 && !o.overwrite)
      return flag + " already holds " + std::to_string(n) +
             " entries; choose a new directory or pass --overwrite to replace same-named files";
  } else {
    const std::string why = make_dirs(dir);
    if (!why.empty()) return "cannot create " + flag + ": " + why;
  }
  // Write permission as the file system sees it (access() says yes to root on a read-only mount).
  const std::string probe = dir + "/.yee-write-test-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return flag + " is not writable: " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

}  // namespace

void prepare_output_dir(const Options& opt, MPI_Comm comm) {
  if (opt.output == "none") return;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::string verdict = broadcast(comm, rank == 0 ? check_dir(opt) : std::string(), 0);
  if (!verdict.empty()) throw UsageError(verdict);
}

}  // namespace io
}  // namespace yee
