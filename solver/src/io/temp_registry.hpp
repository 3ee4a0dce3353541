#pragma once
// Temporary files that must not outlive the process: every temporary yee creates (field
// output, the XDMF sidecar, the report and probe files) is listed here from its creation
// until its rename or removal, and a SIGTERM/SIGINT/SIGHUP handler unlinks whatever is listed,
// then lets the signal end the process as before. The list is a fixed table of fixed-size
// names so that the handler does nothing but unlink() and re-raise (async-signal-safe).
#include <string>

namespace yee {
namespace io {

// Installs the handler once (idempotent). Called at start-up, before any temporary exists.
void install_signal_cleanup();

// With several ranks: how long a signalled rank waits after its cleanup before it ends,
// so that the launcher's SIGKILL (sent when the first rank ends) finds every rank cleaned up.
void set_signal_linger(int ms);

// Lists a temporary; returns its slot, or -1 when the table is full or the name too long
// (the file is then created anyway: the caller still removes it on every normal path).
int register_temp(const std::string& path);
// Forgets the slot (after the rename or the unlink); -1 is ignored.
void unregister_temp(int slot);

// Field output (HDF5 with its sidecar): while a step's pieces are written, the handler also
// removes this rank's final piece (a step never survives half-named); while the sidecar is
// being renamed the signal waits until unblock_step() so that the sidecar names exactly the
// complete steps. Outside these phases the signal acts at once.
void guard_step_piece(const std::string& piece);  // "" = none on this rank
// Per-rank output, on rank 0 (which writes the sidecar): every rank's piece of the step in
// flight (PREFIX + rank as %05d + SUFFIX) is removed too. A rank can already be past the
// step's agreement (its piece complete, its signal waiting for the naming) while rank 0,
// still inside that agreement, dies without naming the step: its piece must go as well.
void guard_step_pieces(const std::string& prefix, int ranks, const std::string& suffix);
void defer_signals_for_naming();
void end_step_phase();  // back to idle; a signal that waited acts here

}  // namespace io
}  // namespace yee
