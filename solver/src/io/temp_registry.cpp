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
  if (g_pending) {
    const int sig = g_pending;
    unlink_listed();
    restore_and_raise(sig);
  }
}

}  // namespace io
}  // namespace yee
