#pragma once
// A file's bytes held read-only in memory: either mapped (POSIX mmap) or an
// owned, page-aligned copy. `owner` keeps them alive; `bytes` views them.
// A mapped file also keeps its descriptor (`fd`, closed with the mapping), so
// its bytes can be read again without touching the mapping's pages.
#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace torsh::model::detail {

struct FileBytes {
  std::shared_ptr<const void> owner;
  std::span<const std::byte> bytes;
  int fd = -1;  // the mapped file's descriptor; -1 for a copy
};

// Maps `path` read-only and private. InvalidArgument naming the path and the
// OS reason when it cannot be opened, is not a regular file, or cannot be mapped.
FileBytes map_file(const std::string& path);
// A copy of `bytes` starting on a page boundary, as a mapping would.
FileBytes copy_bytes(std::span<const std::byte> bytes);
// Copies bytes [offset, offset + n) of `f` into `dst`: read from the file when
// it is mapped (the mapping's pages stay untouched, so they never count in
// this process's memory), a memcpy otherwise. InvalidArgument naming `path`
// when the read fails or comes up short.
void read_bytes(const FileBytes& f, const std::string& path, std::size_t offset, std::size_t n, void* dst);

}  // namespace torsh::model::detail
