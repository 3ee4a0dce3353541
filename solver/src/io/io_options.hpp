#pragma once
// Parsing and validation of the --output* / --hdf5-* flags (the flag table lives in
// options.cpp; the rules live here so the output code owns them).
#include <string>

#include "options.hpp"

namespace yee {
namespace io {

// "ex,ey,hz" (case-insensitive, no repeats) -> Options::output_fields.
void set_output_fields(Options& o, const std::string& v);
// "none" | "deflate" | "deflate:L" (L = 0..9) -> Options::hdf5_deflate.
void set_hdf5_compress(Options& o, const std::string& v);
// "auto" | "none" | "CIxCJxCK" (or CI,CJ,CK) -> Options::hdf5_chunk.
void set_hdf5_chunk(Options& o, const std::string& v);

// Cross-flag rules that need no MPI (format vs strategy vs build); throws UsageError.
void validate_output(const Options& o);

// True when this binary can write HDF5 / write one shared file with parallel HDF5.
bool have_hdf5();
bool have_parallel_hdf5();
// "none", "serial 1.10.8" or "parallel 1.10.8": reported in the build info.
const char* hdf5_build_kind();

// Lower-case component names, indexed by Component.
const char* component_name(int comp);

}  // namespace io
}  // namespace yee
