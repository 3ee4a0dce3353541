#pragma once
// The kernel contract: everything the time loop asks of a backend. A backend is one
// folder src/backends/<name>/ with a kernels.cpp that defines these functions for
// T = float and T = double (selected at build time with -DYEE_BACKEND=<name>).
// The time loop (solver.cpp), halo exchange and diagnostics never touch field memory
// except through these calls, so a device backend keeps the fields on the device.
//
// Grid: each rank holds its owned cells (local indices 1..n[d]) plus ghost[d] layers
// per side (1-ghost[d]..0 and n[d]+1..n[d]+ghost[d]; one, except along the axes the
// wavefront kernel's halos cross on several ranks). Index (i,j,k) -> origin + i*sx +
// j*sy + k, k fastest. Component positions follow Yee: Ex at (i+1/2, j, k), Hx at (i, j+1/2, k+1/2), etc. (global
// index g = goff + local - 1). PEC walls: tangential E at global index 0 is kept 0;
// everything at global index N (the far walls) lives in ghosts that stay 0.
#include <cstddef>
#include <cstdint>
#include <string>

namespace yee {

enum Component { kEx = 0, kEy, kEz, kHx, kHy, kHz };

// Half-open box of local indices.
struct Box {
  long lo[3];
  long hi[3];
  bool empty() const { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
};

template <typename T>
struct Fields {
  T* comp[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};  // Ex Ey Ez Hx Hy Hz
  long n[3] = {0, 0, 0};      // owned cells per axis
  long goff[3] = {0, 0, 0};   // global index of local index 1
  long gn[3] = {0, 0, 0};     // global cells per axis
  long sx = 0, sy = 0;        // strides of i and j (k stride is 1)
  std::size_t count = 0;      // elements per component array, ghosts included
  bool defer_low[3] = {false, false, false};  // a neighbour rank sits below on this axis
  long tile = 0;              // fused kernel cache-tile rows (0 = backend's choice)
  long ghost[3] = {1, 1, 1};  // ghost layers per side and axis, set before allocate()
  long origin = 0;            // offset of local index (0,0,0) from the array start
  long at(long i, long j, long k) const { return origin + i * sx + j * sy + k; }
};

// Sums the energy diagnostic needs, accumulated in double.
struct EnergySums {
  double e2 = 0.0;      // sum |E^n|^2 over owned entries
  double hh = 0.0;      // sum H^{n-1/2} . H^{n+1/2}
};

namespace kernels {

const char* backend_name();

// Allocates the six arrays and zeroes them with the threads and schedule of the
// update loops (first touch). Sets count/strides from n.
template <typename T> void allocate(Fields<T>& f);
template <typename T> void release(Fields<T>& f);

// Initial condition: value(comp, gi, gj, gk) in global indices for every owned entry of
// the E components; host callback so backends share the mode/pulse formulas.
using InitFn = double (*)(const void* ctx, int comp, long gi, long gj, long gk);
template <typename T> void init_e(Fields<T>& f, InitFn fn, const void* ctx);

// Split update: H^{n+1/2} = H^{n-1/2} - c curl E^n over box (accumulates energy sums
// when sums != nullptr), E^{n+1} = E^n + c curl H^{n+1/2} over box (PEC applied).
template <typename T> void update_h(Fields<T>& f, const Box& box, T c, EnergySums* sums);
template <typename T> void update_e(Fields<T>& f, const Box& box, T c);

// Fused update, in two parts around the H halo exchange:
//  part 1: H everywhere in the owned box, and E wherever its stencil needs no H from
//          a neighbour rank (faces flagged defer_low stay old);
//  part 2: E on the deferred faces (after the H ghosts have arrived).
// Together they produce exactly the same values as update_h + update_e.
template <typename T> void fused_part1(Fields<T>& f, T c);
template <typename T> void fused_part2(Fields<T>& f, T c);

// Soft source: adds value to one entry (local indices).
template <typename T> void add_to(Fields<T>& f, int comp, long i, long j, long k, double value);
template <typename T> double read(const Fields<T>& f, int comp, long i, long j, long k);

// Halo faces: layer `layer` (local index along `axis`) of components comp0 and comp1,
// owned range of the other two axes, packed to / unpacked from a contiguous message
// buffer (alloc_message), complete when the call returns. Returns the number of elements
// (2 * face cells).
template <typename T> std::size_t pack(const Fields<T>& f, int axis, long layer, int comp0, int comp1, T* buf);
template <typename T> void unpack(Fields<T>& f, int axis, long layer, int comp0, int comp1, const T* buf);

// Device and message memory. select_device binds this rank to its compute device before
// allocate() and returns a short description ("host" on the CPU); it throws
// std::runtime_error when there is none. gpu_per_rank: each rank of a node needs its own
// device (else ranks share devices round-robin). Message buffers live in the backend's
// memory; when messages_on_device(), host code only hands them to a device-aware MPI or
// copies them with message_to_host / message_from_host.
std::string select_device(int local_rank, int local_size, bool gpu_per_rank);
bool messages_on_device();
void* alloc_message(std::size_t bytes);  // zero-filled (CUDA test aid YEE_POISON=1: NaN); throws std::bad_alloc
void free_message(void* p);
void message_to_host(void* host, const void* msg, std::size_t bytes);
void message_from_host(void* msg, const void* host, std::size_t bytes);

// Field words this backend's update moves per cell per step (the report's bytes-per-cell
// model): 12 for a fused sweep (read and write E and H once), 18 for separate H and E sweeps.
int traffic_words_per_cell();

// Output: copies the owned entries of one component, local (i, j, k) row-major with k
// fastest (n[0]*n[1]*n[2] values), into a host buffer.
template <typename T> void copy_owned(const Fields<T>& f, int comp, T* out);

// Order-independent checksum of every owned entry (value bits mixed with the global
// index), so it is identical for any decomposition and thread count.
template <typename T> std::uint64_t checksum(const Fields<T>& f);

// max |div E| over nodes whose backward stencil is owned or in the low ghosts, and max |E|.
template <typename T> void div_e(const Fields<T>& f, double* div_max, double* e_max);

}  // namespace kernels
}  // namespace yee

// Each backend's kernels.cpp ends with YEE_INSTANTIATE_CONTRACT(float) and (double) inside
// namespace yee::kernels: the template part of the contract is listed once, here.
#define YEE_INSTANTIATE_CONTRACT(T)                                                                  \
  template void allocate<T>(Fields<T>&);                                                            \
  template void release<T>(Fields<T>&);                                                             \
  template void init_e<T>(Fields<T>&, InitFn, const void*);                                         \
  template void update_h<T>(Fields<T>&, const Box&, T, EnergySums*);                                \
  template void update_e<T>(Fields<T>&, const Box&, T);                                             \
  template void fused_part1<T>(Fields<T>&, T);                                                      \
  template void fused_part2<T>(Fields<T>&, T);                                                      \
  template void add_to<T>(Fields<T>&, int, long, long, long, double);                               \
  template double read<T>(const Fields<T>&, int, long, long, long);                                 \
  template std::size_t pack<T>(const Fields<T>&, int, long, int, int, T*);                          \
  template void unpack<T>(Fields<T>&, int, long, int, int, const T*);                               \
  template void copy_owned<T>(const Fields<T>&, int, T*);                                           \
  template std::uint64_t checksum<T>(const Fields<T>&);                                             \
  template void div_e<T>(const Fields<T>&, double*, double*);
