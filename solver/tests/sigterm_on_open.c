/* Test shim (LD_PRELOAD): the process sends itself SIGTERM right after it opens a file
 * whose path contains $YEE_TEST_SIGTERM_ON_OPEN. Lets a test put the signal inside a
 * library's own short-lived files (MPI-IO's lock probe), a window too narrow to hit from
 * outside. Says so on stderr, so the test can tell whether the window was reached. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

static int opened(const char* path, int fd) {
  const char* want = getenv("YEE_TEST_SIGTERM_ON_OPEN");
  if (fd >= 0 && want && *want && path && strstr(path, want)) {
    static const char msg[] = "sigterm_on_open: signalled on ";
    (void)!write(2, msg, sizeof msg - 1);
    (void)!write(2, path, strlen(path));
    (void)!write(2, "\n", 1);
    raise(SIGTERM);
  }
  return fd;
}

#define INTERPOSE(name)                                                        \
  int name(const char* path, int flags, ...) {                                 \
    static int (*real)(const char*, int, ...);                                 \
    if (!real) real = (int (*)(const char*, int, ...))dlsym(RTLD_NEXT, #name); \
    mode_t mode = 0;                                                           \
    if (flags & (O_CREAT | O_TMPFILE)) {                                       \
      va_list ap;                                                              \
      va_start(ap, flags);                                                     \
      mode = (mode_t)va_arg(ap, int);                                          \
      va_end(ap);                                                              \
    }                                                                          \
    return opened(path, real(path, flags, mode));                              \
  }

INTERPOSE(open)
INTERPOSE(open64)
