#pragma once
// The kernel cache's files. One file per kernel build, named by the SHA-256 of
// its key (the source's hash, entry, dialect, defines, options, device,
// compiler and driver versions, library version); the file repeats the key,
// so a stale or colliding entry is told apart, and carries the payload's
// SHA-256, so a torn or corrupt file is detected rather than loaded. Files are
// written to a temporary name and renamed into place: concurrent processes
// see either no entry or a complete one. Each backend's folder keeps at
// most 2048 entries, the least recently written dropped first.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace torsh::detail {

struct CachedKernel {
  std::vector<std::uint8_t> bytes;
  std::string log;
};

// The cache directory: $TORSH_KERNEL_CACHE_DIR ("off", "0" or "none" disable
// it), else user_cache_root()/kernels. Read once per process.
const std::string& kernel_cache_directory();

// The file for `key` under `dir`.
std::string kernel_cache_file(const std::string& dir, const std::string& key);

// Reads the entry. nullopt when there is none; when there is one that cannot
// be used, nullopt with `problem` saying why (corrupt, truncated, stale).
std::optional<CachedKernel> read_cached_kernel(const std::string& path, const std::string& key, std::string& problem);

// Writes the entry atomically. False with `problem` set when it cannot.
bool write_cached_kernel(const std::string& path, const std::string& key, const CachedKernel& k, std::string& problem);

}  // namespace torsh::detail
