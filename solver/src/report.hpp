#pragma once
// The JSON report (schema "yee-report", version 1, documented in solver/README.md),
// the human summary on stderr, and atomic file writes.
#include <string>

#include "kernel_contract.hpp"
#include "options.hpp"
#include "solver.hpp"

namespace yee {

struct ReportContext {
  const Options* opt;
  const RunResult* res;
  int ranks;
  int threads;
  std::string placement_json;  // from gather_placement
  double peak_rss = 0.0;       // max over ranks
  double field_bytes = 0.0;    // max over ranks
};

constexpr int kSchemaVersion = 1;

// Model bytes per cell per step, DESIGN.md section 3: the field words the backend's update
// moves (CPU: read 6 + write 6; CUDA: separate H and E sweeps, 18) times the word size.
inline int bytes_per_cell(const std::string& precision) {
  return kernels::traffic_words_per_cell() * (precision == "f64" ? 8 : 4);
}

std::string report_json(const ReportContext& ctx);
std::string human_summary(const ReportContext& ctx);
std::string probes_csv(const Options& opt, const RunResult& res);

// Writes text to path via a temporary file and rename; "-" writes to stdout. False on failure.
bool write_atomically(const std::string& path, const std::string& text);

}  // namespace yee
