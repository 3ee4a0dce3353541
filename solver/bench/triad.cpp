// yee-triad: STREAM-style triad a[i] = b[i] + s*c[i] with OpenMP (static schedule,
// first-touch by the same threads), the bandwidth roofline for yee's Mcells/s.
// Reports GB/s counted as STREAM does: 3 words per element, write-allocate not counted;
// rmw_best_gbs: the in-place update c[i] = c[i] + s*b[i] (the fields' access pattern).
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  long n = 1L << 26;  // 64 Mi doubles per array, 1.5 GiB in all: far beyond any cache
  int reps = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--elements" && i + 1 < argc) {
      n = std::atol(argv[++i]);
    } else if (a == "--repeats" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--help") {
      std::printf("usage: yee-triad [--elements N (default 2^26)] [--repeats K (default 10)]\n"
                  "Prints one JSON object: best and average triad GB/s (3 x 8 bytes per element)\n"
                  "and the best in-place read-modify-write GB/s (rmw_best_gbs).\n");
      return 0;
    } else {
      std::fprintf(stderr, "yee-triad: error: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (n < 1024 || reps < 1) {
    std::fprintf(stderr, "yee-triad: error: --elements must be >= 1024 and --repeats >= 1\n");
    return 2;
  }
  double* a = static_cast<double*>(std::aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64));
  double* b = static_cast<double*>(std::aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64));
  double* c = static_cast<double*>(std::aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64));
  if (!a || !b || !c) {
    std::fprintf(stderr, "yee-triad: error: cannot allocate 3 x %ld doubles\n", n);
    return 1;
  }
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  const double s = 3.0;
  double best = 0.0, sum = 0.0;
  for (int r = 0; r < reps; ++r) {
    const double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    const double t = omp_get_wtime() - t0;
    const double gbs = 3.0 * sizeof(double) * double(n) / t / 1e9;
    best = std::max(best, gbs);
    sum += gbs;
  }
  // In-place read-modify-write a[i] = a[i] + s*b[i], the access pattern of a field update
  // (each word read and written back where it is): 3 words per element counted as well.
  double rmw_best = 0.0;
  for (int r = 0; r < reps; ++r) {
    const double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) c[i] = c[i] + s * b[i];
    const double t = omp_get_wtime() - t0;
    rmw_best = std::max(rmw_best, 3.0 * sizeof(double) * double(n) / t / 1e9);
  }
  const bool valid = a[n / 2] == 7.0 && a[0] == 7.0 && a[n - 1] == 7.0 && c[n / 2] == 2.0 + 3.0 * reps;
  std::printf("{\"program\": \"yee-triad\", \"valid\": %s, \"elements\": %ld, \"threads\": %d, \"repeats\": %d, "
              "\"best_gbs\": %.4f, \"avg_gbs\": %.4f, \"rmw_best_gbs\": %.4f}\n",
              valid ? "true" : "false", n, omp_get_max_threads(), reps, best, sum / reps, rmw_best);
  std::free(a);
  std::free(b);
  std::free(c);
  return valid ? 0 : 1;
}
