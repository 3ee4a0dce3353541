#pragma once
// Provenance compiled into the binary (generated file build_info.cpp).
namespace yee {
struct BuildInfo {
  const char* git_sha;
  bool dirty;
  const char* compiler;
  const char* flags;
  const char* build_type;
};
extern const BuildInfo build_info;
}  // namespace yee
