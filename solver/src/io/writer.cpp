#include "io/writer.hpp"

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>

#include "io/atomic_file.hpp"
#include "io/collective.hpp"
#include "io/formats.hpp"
#include "io/temp_registry.hpp"

namespace yee {
namespace io {
namespace {

// Chunk shape for --hdf5-chunk: auto = 32^3 (clamped to the data) when compressing.
void chunk_shape(const Options& o, int* chunk) {
  chunk[0] = chunk[1] = chunk[2] = 0;
  if (o.hdf5_chunk == "none") return;
  if (o.hdf5_chunk == "auto") {
    if (o.hdf5_deflate >= 0) chunk[0] = chunk[1] = chunk[2] = 32;
    return;
  }
  long v[3];
  std::sscanf(o.hdf5_chunk.c_str(), "%ld%*[x,]%ld%*[x,]%ld", &v[0], &v[1], &v[2]);
  for (int a = 0; a < 3; ++a) chunk[a] = int(v[a]);
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

template <typename T>
FieldWriter<T>::FieldWriter(const Options& opt, MPI_Comm cart, const Fields<T>& f) : opt_(opt), comm_(cart) {
  active_ = opt.output != "none";
  if (!active_) return;
  every_ = opt.output_every;
  MPI_Comm_rank(cart, &rank_);
  MPI_Comm_size(cart, &size_);
  for (int a = 0; a < 3; ++a) {
    mine_.off[a] = f.goff[a];
    mine_.n[a] = f.n[a];
  }
  std::vector<long> all(6 * std::size_t(size_));
  long me[6] = {mine_.off[0], mine_.off[1], mine_.off[2], mine_.n[0], mine_.n[1], mine_.n[2]};
  MPI_Allgather(me, 6, MPI_LONG, all.data(), 6, MPI_LONG, cart);
  blocks_.resize(std::size_t(size_));
  for (int r = 0; r < size_; ++r)
    for (int a = 0; a < 3; ++a) {
      blocks_[r].off[a] = all[6 * r + a];
      blocks_[r].n[a] = all[6 * r + 3 + a];
    }
  frame_.dt = opt.courant;
  frame_.dx_m = opt.dx;
  for (int a = 0; a < 3; ++a) frame_.gn[a] = opt.n[a];
  frame_.ranks = size_;
  frame_.comps = opt.output_fields;
  chunk_shape(opt, frame_.chunk);
  frame_.deflate = opt.hdf5_deflate;
  frame_.records = opt.hdf5_layout == "records";
  frame_.fsync = opt.output_fsync;
  frame_.coordinates = opt.ascii_layout == "coordinates";
  frame_.tag = broadcast(cart, std::to_string(::getpid()), 0);  // one temporary name per file, all ranks
  local_.assign(frame_.comps.size(), std::vector<T>(std::size_t(mine_.cells())));
  if (opt.output == "hdf5") quiet_hdf5();
}

template <typename T>
std::string FieldWriter<T>::step_base(long step, int rank) const {
  char name[64];
  if (rank < 0)
    std::snprintf(name, sizeof name, "/fields_s%06ld", step);
  else
    std::snprintf(name, sizeof name, "/fields_s%06ld_r%05d", step, rank);
  return opt_.output_dir + name;
}

template <typename T>
std::string FieldWriter<T>::write_piece(const std::string& base, const Block& b, const std::vector<const T*>& data) {
  Tally t;
  std::string err;
  if (opt_.output == "ascii")
    err = write_ascii<T>(base + ".txt", frame_, b, data, t);
  else if (opt_.output == "binary")
    err = write_binary<T>(base, frame_, b, data, t);
  else
    err = write_hdf5<T>(base + ".h5", frame_, b, data, t);
  bytes_ += t.bytes;
  files_ += t.files;
  return err;
}

// Root strategy: each component is gathered into a global array on rank 0, which then
// writes one file. Memory on rank 0: (written components) x (global cells) values.
template <typename T>
std::string FieldWriter<T>::prepare_gather(const char* strategy, bool staged, std::vector<int>& counts,
                                           std::vector<int>& displs) {
  const double cells = double(frame_.gn[0]) * double(frame_.gn[1]) * double(frame_.gn[2]);
  const std::string name = std::string("--output-strategy ") + strategy;
  std::string err;
  if (cells > double(INT_MAX)) err = name + ": the grid has more cells than one MPI message can carry "
                                            "(2^31-1); use --output-strategy per-rank or shared";
  counts.assign(static_cast<std::size_t>(size_), 0);
  displs.assign(static_cast<std::size_t>(size_), 0);
  for (int r = 0; r < size_; ++r) {
    counts[r] = int(blocks_[r].cells());
    displs[r] = r ? displs[r - 1] + counts[r - 1] : 0;
  }
  const std::size_t nc = frame_.comps.size();
  if (err.empty() && rank_ == 0) {
    try {
      if (staged) staging_.resize(std::size_t(cells));
      global_.resize(nc * std::size_t(cells));
    } catch (const std::bad_alloc&) {
      err = name + ": rank 0 cannot hold the gathered fields (" +
            std::to_string(long(double(nc) * cells * sizeof(T) / 1048576.0)) + " MiB); use per-rank or shared";
    }
  }
  return first_error(comm_, err);
}

template <typename T>
std::string FieldWriter<T>::gather_and_write(long step) {
  const double cells = double(frame_.gn[0]) * double(frame_.gn[1]) * double(frame_.gn[2]);
  std::vector<int> counts, displs;
  std::string err = prepare_gather("root", true, counts, displs);
  if (!err.empty()) return err;
  const std::size_t nc = frame_.comps.size();
  MPI_Datatype type = sizeof(T) == 4 ? MPI_FLOAT : MPI_DOUBLE;
  const long g1 = frame_.gn[1], g2 = frame_.gn[2];
  for (std::size_t c = 0; c < nc; ++c) {
    MPI_Gatherv(local_[c].data(), int(mine_.cells()), type, staging_.data(), counts.data(), displs.data(), type, 0,
                comm_);
    if (rank_ != 0) continue;
    T* dst = global_.data() + c * std::size_t(cells);
    for (int r = 0; r < size_; ++r) {  // place each rank's block in the global C-order array
      const Block& b = blocks_[r];
      const T* src = staging_.data() + displs[r];
      for (long i = 0; i < b.n[0]; ++i)
        for (long j = 0; j < b.n[1]; ++j)
          std::memcpy(dst + ((b.off[0] + i) * g1 + (b.off[1] + j)) * g2 + b.off[2],
                      src + (i * b.n[1] + j) * b.n[2], sizeof(T) * std::size_t(b.n[2]));
    }
  }
  if (rank_ != 0) return "";
  std::vector<const T*> data;
  for (std::size_t c = 0; c < nc; ++c) data.push_back(global_.data() + c * std::size_t(cells));
  const Block whole{{0, 0, 0}, {frame_.gn[0], frame_.gn[1], frame_.gn[2]}};
  return write_piece(step_base(step, -1), whole, data);
}

// Root-per-rank strategy (paper 001: "only one I/O server can produce output data" and
// "one output file holds the entire data from one PE"): each component is gathered to
// rank 0 in rank order, and rank 0 writes every rank's block to that rank's file.
template <typename T>
std::string FieldWriter<T>::gather_and_write_blocks(long step, std::vector<std::string>& written) {
  const double cells = double(frame_.gn[0]) * double(frame_.gn[1]) * double(frame_.gn[2]);
  std::vector<int> counts, displs;
  std::string err = prepare_gather("root-per-rank", false, counts, displs);
  if (!err.empty()) return err;
  const std::size_t nc = frame_.comps.size();
  MPI_Datatype type = sizeof(T) == 4 ? MPI_FLOAT : MPI_DOUBLE;
  for (std::size_t c = 0; c < nc; ++c)
    MPI_Gatherv(local_[c].data(), int(mine_.cells()), type, rank_ == 0 ? global_.data() + c * std::size_t(cells)
                                                                        : nullptr,
                counts.data(), displs.data(), type, 0, comm_);
  if (rank_ != 0) return "";
  for (int r = 0; r < size_; ++r) {
    std::vector<const T*> data;
    for (std::size_t c = 0; c < nc; ++c) data.push_back(global_.data() + c * std::size_t(cells) + displs[r]);
    frame_.rank = r;
    err = write_piece(step_base(step, r), blocks_[r], data);
    if (!err.empty()) return err;
    written.push_back(step_base(step, r));
  }
  return "";
}

template <typename T>
bool FieldWriter<T>::write_step(const Fields<T>& f, long step) {
  frame_.step = step;
  frame_.time_e = double(step) * opt_.courant;
  frame_.time_h = (double(step) - 0.5) * opt_.courant;
  std::vector<const T*> data;
  for (std::size_t c = 0; c < frame_.comps.size(); ++c) {
    kernels::copy_owned(f, frame_.comps[c], local_[c].data());
    data.push_back(local_[c].data());
  }
  std::string err;
  XdmfStep xs{step, frame_.time_e, {}};
  const Block whole{{0, 0, 0}, {frame_.gn[0], frame_.gn[1], frame_.gn[2]}};
  const std::string& s = opt_.output_strategy;
  const bool hdf5 = opt_.output == "hdf5";
  const bool blocks = s == "per-rank" || s == "root-per-rank";  // a file per rank's block
  const std::string piece = s == "per-rank" ? step_base(step, rank_) + ".h5"
                                            : (rank_ == 0 ? step_base(step, blocks ? 0 : -1) + ".h5" : "");
  // HDF5: a SIGTERM before every rank has its piece removes this rank's piece too (the
  // file can reach its final name at any moment of the write), so that the directory holds
  // exactly the steps the sidecar names; temporaries of every format are removed anyway.
  if (hdf5) guard_step_piece(piece);
  if (hdf5 && blocks && rank_ == 0) {
    const std::string any = step_base(step, 0);  // ..._r00000: the rank digits are the last five
    guard_step_pieces(any.substr(0, any.size() - 5), size_, ".h5");
  }
  std::vector<std::string> written;  // root-per-rank: the step's files rank 0 completed
  if (s == "root") {
    err = gather_and_write(step);
    xs.pieces.push_back({base_name(step_base(step, -1)) + ".h5", whole});
  } else if (s == "root-per-rank") {
    err = gather_and_write_blocks(step, written);
    for (int r = 0; r < size_; ++r) xs.pieces.push_back({base_name(step_base(step, r)) + ".h5", blocks_[r]});
  } else if (s == "per-rank") {
    frame_.rank = rank_;
    err = write_piece(step_base(step, rank_), mine_, data);
    for (int r = 0; r < size_; ++r) xs.pieces.push_back({base_name(step_base(step, r)) + ".h5", blocks_[r]});
  } else {
    Tally t;
    err = write_hdf5_shared<T>(comm_, step_base(step, -1) + ".h5", frame_, mine_, data, t);
    bytes_ += t.bytes;
    files_ += t.files;
    xs.pieces.push_back({base_name(step_base(step, -1)) + ".h5", whole});
  }
  error_ = first_error(comm_, err);
  if (!error_.empty()) {
    if (hdf5) {
      if (err.empty() && !piece.empty()) std::remove(piece.c_str());  // another rank failed: step incomplete
      for (const std::string& w : written) std::remove((w + ".h5").c_str());
      end_step_phase();
    }
    return false;
  }
  if (!hdf5) {
    ++steps_;
    return true;
  }
  defer_signals_for_naming();  // every piece is complete: a SIGTERM now waits for the sidecar
  const bool named = update_sidecar(xs);
  // The step's files are complete but the sidecar could not say so: remove them, so the
  // directory holds exactly the steps fields.xdmf describes.
  if (!named && !piece.empty()) std::remove(piece.c_str());
  if (!named)
    for (const std::string& w : written) std::remove((w + ".h5").c_str());
  if (named) ++steps_;
  end_step_phase();  // a SIGTERM that waited acts here
  return named;
}

// Rewrites fields.xdmf (atomically) to list the steps so far plus `step`, after every
// completed step: whatever ends the run (an error, a full disk, SIGTERM, a kill), the
// sidecar on disk describes exactly the complete steps, and viewers open what completed.
template <typename T>
bool FieldWriter<T>::update_sidecar(const XdmfStep& step) {
  std::string err;
  if (rank_ == 0) {
    xdmf_.push_back(step);
    const std::string text = xdmf_text(xdmf_, frame_.comps, int(sizeof(T)), frame_.records);
    AtomicFile file(opt_.output_dir + "/fields.xdmf", frame_.tag, frame_.fsync);
    if (file.write(text.data(), text.size())) err = file.commit();
    else err = file.error();
    if (err.empty()) {
      bytes_ += file.bytes() - sidecar_bytes_;  // the sidecar counts once, at its final size
      sidecar_bytes_ = file.bytes();
      if (xdmf_.size() == 1) files_ += 1;
    } else {
      xdmf_.pop_back();
    }
  }
  error_ = first_error(comm_, err);
  return error_.empty();
}

template <typename T>
bool FieldWriter<T>::finish() {
  return true;  // the sidecar is already current (update_sidecar after every step)
}

template <typename T>
IoTotals FieldWriter<T>::totals() const {
  IoTotals t;
  if (!active_) return t;
  double b = bytes_;
  long nf = files_;
  MPI_Reduce(&b, &t.bytes, 1, MPI_DOUBLE, MPI_SUM, 0, comm_);
  MPI_Reduce(&nf, &t.files, 1, MPI_LONG, MPI_SUM, 0, comm_);
  t.steps_written = steps_;
  return t;
}

template class FieldWriter<float>;
template class FieldWriter<double>;

}  // namespace io
}  // namespace yee
