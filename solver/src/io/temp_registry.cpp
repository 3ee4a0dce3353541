#include "io/temp_registry.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace yee {
namespace io {
namespace {

constexpr int kSlots = 32;        // yee holds at most a few temporaries at once
constexpr int kNameBytes = 4096;  // PATH_MAX
constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

// in_use: 0 free, 1 being filled (the handler skips it), 2 listed.
std::atomic<int> g_state[kSlots];
char g_names[kSlots][kNameBytes];
char g_piece[kNameBytes];
std::atomic<int> g_piece_set{0};
// Rank 0 of per-rank output: every rank's piece of the step in flight, PREFIX<rank:05>SUFFIX.
char g_all_prefix[kNameBytes], g_all_suffix[16], g_all_name[kNameBytes + 32];
volatile sig_atomic_t g_all_ranks = 0;
enum Phase : int { kIdle = 0, kWriting = 1, kNaming = 2 };
volatile sig_atomic_t g_phase = kIdle;
volatile sig_atomic_t g_pending = 0;
struct sigaction g_previous[3];
volatile sig_atomic_t g_linger_ms = 0;
std::atomic<bool> g_installed{false};

void restore_and_raise(int sig) {
  // mpirun sends SIGTERM to every rank and SIGKILL as soon as the first one exits: a rank
  // that has not been scheduled yet would die with its temporaries. Staying a moment after
  // our own cleanup lets every rank run its handler first.
  if (g_linger_ms > 0) {
    struct timespec left = {g_linger_ms / 1000, (g_linger_ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0) {}
  }
  for (int i = 0; i < 3; ++i)
    if (kSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
  raise(sig);
}

void unlink_listed() {
  for (int s = 0; s < kSlots; ++s)
    if (g_state[s].load(std::memory_order_acquire) == 2) unlink(g_names[s]);
  if (g_phase == kWriting && g_piece_set.load(std::memory_order_acquire)) unlink(g_piece);
  if (g_phase == kWriting && g_all_ranks > 0) {  // names built by hand: no snprintf here
    std::size_t p = 0;
    while (g_all_prefix[p]) {
      g_all_name[p] = g_all_prefix[p];
      ++p;
    }
    for (int r = 0; r < g_all_ranks; ++r) {
      char digits[12];
      int nd = 0;
      for (int v = r; v > 0 || nd < 5; v /= 10) digits[nd++] = char('0' + v % 10);
      std::size_t q = p;
      while (nd > 0) g_all_name[q++] = digits[--nd];
      for (const char* t = g_all_suffix; *t; ++t) g_all_name[q++] = *t;
      g_all_name[q] = '\0';
      unlink(g_all_name);
    }
  }
}

extern "C" void on_signal(int sig) {
  if (g_phase == kNaming) {  // the step is complete everywhere: finish naming it first
    g_pending = sig;
    return;
  }
  unlink_listed();
  restore_and_raise(sig);
}

}  // namespace

void install_signal_cleanup() {
  if (g_installed.exchange(true)) return;
  for (int i = 0; i < 3; ++i) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : kSignals) sigaddset(&sa.sa_mask, sig);  // one handler run at a time
    sigaction(kSignals[i], &sa, &g_previous[i]);
    // A signal the caller chose to ignore (nohup) stays ignored.
    if (g_previous[i].sa_handler == SIG_IGN) sigaction(kSignals[i], &g_previous[i], nullptr);
  }
}

void set_signal_linger(int ms) { g_linger_ms = ms; }

int register_temp(const std::string& path) {
  if (path.size() >= std::size_t(kNameBytes)) return -1;
  for (int s = 0; s < kSlots; ++s) {
    int expected = 0;
    if (!g_state[s].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_names[s], path.c_str(), path.size() + 1);
    g_state[s].store(2, std::memory_order_release);
    return s;
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot >= 0 && slot < kSlots) g_state[slot].store(0, std::memory_order_release);
}

void guard_step_pieces(const std::string& prefix, int ranks, const std::string& suffix) {
  g_all_ranks = 0;
  if (ranks <= 0 || prefix.size() >= std::size_t(kNameBytes) || suffix.size() >= sizeof g_all_suffix) return;
  std::memcpy(g_all_prefix, prefix.c_str(), prefix.size() + 1);
  std::memcpy(g_all_suffix, suffix.c_str(), suffix.size() + 1);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  g_all_ranks = ranks;
}

void guard_step_piece(const std::string& piece) {
  g_piece_set.store(0);
  if (!piece.empty() && piece.size() < std::size_t(kNameBytes)) {
    std::memcpy(g_piece, piece.c_str(), piece.size() + 1);
    g_piece_set.store(1, std::memory_order_release);
  }
  g_phase = kWriting;
}

void defer_signals_for_naming() { g_phase = kNaming; }

void end_step_phase() {
  g_phase = kIdle;
  g_piece_set.store(0);
  g_all_ranks = 0;
  if (g_pending) {
    const int sig = g_pending;
    unlink_listed();
    restore_and_raise(sig);
  }
}

}  // namespace io
}  // namespace yee
