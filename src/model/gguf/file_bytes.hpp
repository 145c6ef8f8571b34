#pragma once
// A file's bytes held read-only in memory: either mapped (POSIX mmap) or an
// owned, page-aligned copy. `owner` keeps them alive; `bytes` views them.
#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace torsh::model::detail {

struct FileBytes {
  std::shared_ptr<const void> owner;
  std::span<const std::byte> bytes;
};

// Maps `path` read-only and private. InvalidArgument naming the path and the
// OS reason when it cannot be opened, is not a regular file, or cannot be mapped.
FileBytes map_file(const std::string& path);
// A copy of `bytes` starting on a page boundary, as a mapping would.
FileBytes copy_bytes(std::span<const std::byte> bytes);

}  // namespace torsh::model::detail
