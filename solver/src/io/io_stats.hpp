#pragma once
// What the field output did during one run (sums over ranks, on rank 0).
namespace yee {
namespace io {

struct IoTotals {
  long steps_written = 0;   // output steps
  double bytes = 0.0;       // bytes of the final files (data, headers, sidecars)
  long files = 0;           // final files written
};

}  // namespace io
}  // namespace yee
