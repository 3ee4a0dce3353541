#pragma once
// A deliberate slowdown, for testing regression gates only (CMake: -DYEE_INJECTED_SLOWDOWN=<percent>,
// 0 in every normal build). After each time step (or wavefront pass) the calling thread spins for that
// percentage of the CPU time the step took it: real extra CPU work, so the run is that much slower
// whatever the machine's load and however the ranks wait for each other. The JSON report's
// build.injected_slowdown_percent says so, and a normal build reports nothing.
#include <ctime>

#ifndef YEE_INJECTED_SLOWDOWN
#define YEE_INJECTED_SLOWDOWN 0
#endif

namespace yee {

constexpr int kInjectedSlowdownPercent = YEE_INJECTED_SLOWDOWN;
static_assert(kInjectedSlowdownPercent >= 0, "YEE_INJECTED_SLOWDOWN is a percentage >= 0");

class InjectedSlowdown {
 public:
  void step_begins() {
    if (kInjectedSlowdownPercent) start_ = thread_cpu_seconds();
  }
  void step_ends() const {
    if (!kInjectedSlowdownPercent) return;
    const double now = thread_cpu_seconds();
    const double until = now + (now - start_) * kInjectedSlowdownPercent / 100.0;
    while (thread_cpu_seconds() < until) {
    }
  }

 private:
  static double thread_cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  }
  double start_ = 0.0;
};

}  // namespace yee
