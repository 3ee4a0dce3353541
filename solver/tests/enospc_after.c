/* Test shim (LD_PRELOAD): a disk that fills up after a given number of bytes. Writes to
 * files whose path contains $YEE_TEST_ENOSPC_PATH are counted; once $YEE_TEST_ENOSPC_AFTER
 * bytes have gone to such files (in this process), the rest fail with ENOSPC, and a write
 * that crosses the limit is cut short there, as on a real full disk. Covers the calls the
 * solver, HDF5's sec2 driver and MPI-IO write with (write, pwrite, writev, pwritev and
 * their 64-bit names). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long long written;

/* Bytes this call may still write to fd: SSIZE_MAX for files outside the watched path. */
static long long room(int fd) {
  const char* want = getenv("YEE_TEST_ENOSPC_PATH");
  const char* after = getenv("YEE_TEST_ENOSPC_AFTER");
  if (!want || !*want || !after) return LLONG_MAX;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return LLONG_MAX;
  path[n] = '\0';
  if (!strstr(path, want)) return LLONG_MAX;
  const long long left = atoll(after) - written;
  return left > 0 ? left : 0;
}

static ssize_t refuse(void) {
  errno = ENOSPC;
  return -1;
}

static ssize_t counted(ssize_t r) {
  if (r > 0) written += r;
  return r;
}

typedef ssize_t (*write_fn)(int, const void*, size_t);
typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off64_t);
typedef ssize_t (*writev_fn)(int, const struct iovec*, int);
typedef ssize_t (*pwritev_fn)(int, const struct iovec*, int, off64_t);
#define REAL(name, type) \
  static type real;      \
  if (!real) real = (type)dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void* buf, size_t count) {
  REAL(write, write_fn);
  const long long left = room(fd);
  if (left == LLONG_MAX) return real(fd, buf, count);
  if (left == 0 && count > 0) return refuse();
  return counted(real(fd, buf, (size_t)left < count ? (size_t)left : count));
}

#define PWRITE(name, off_type)                                                   \
  ssize_t name(int fd, const void* buf, size_t count, off_type off) {           \
    REAL(name, pwrite_fn);                          \
    const long long left = room(fd);                                             \
    if (left == LLONG_MAX) return real(fd, buf, count, off);                     \
    if (left == 0 && count > 0) return refuse();                                 \
    return counted(real(fd, buf, (size_t)left < count ? (size_t)left : count, off)); \
  }
PWRITE(pwrite, off_t)
PWRITE(pwrite64, off64_t)

/* The vector calls: within the limit they pass unchanged; across it, only the part that
 * fits is written (from the first vector, which is enough to make the caller see a short write). */
static ssize_t vector_room(int fd, const struct iovec* iov, int n, long long* left) {
  *left = room(fd);
  if (*left == LLONG_MAX) return 1;
  long long total = 0;
  for (int i = 0; i < n; ++i) total += (long long)iov[i].iov_len;
  if (total <= *left) return 1;
  return 0;
}

ssize_t writev(int fd, const struct iovec* iov, int n) {
  REAL(writev, writev_fn);
  long long left;
  if (vector_room(fd, iov, n, &left)) return left == LLONG_MAX ? real(fd, iov, n) : counted(real(fd, iov, n));
  if (left == 0) return refuse();
  return write(fd, iov[0].iov_base, iov[0].iov_len);
}

#define PWRITEV(name, off_type)                                                         \
  ssize_t name(int fd, const struct iovec* iov, int n, off_type off) {                 \
    REAL(name, pwritev_fn);                            \
    long long left;                                                                     \
    if (vector_room(fd, iov, n, &left))                                                 \
      return left == LLONG_MAX ? real(fd, iov, n, off) : counted(real(fd, iov, n, off)); \
    if (left == 0) return refuse();                                                     \
    return pwrite(fd, iov[0].iov_base, iov[0].iov_len, off);                            \
  }
PWRITEV(pwritev, off_t)
PWRITEV(pwritev64, off64_t)
