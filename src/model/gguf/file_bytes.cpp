#include "file_bytes.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "torsh/core/error.hpp"

namespace torsh::model::detail {

namespace {

constexpr std::size_t kPage = 4096;

[[noreturn]] void os_fail(const std::string& path, const std::string& what, int err) {
  throw Error(ErrorCode::InvalidArgument, "GGUF " + path + ": " + what + ": " + std::strerror(err), {.op = "gguf"},
              {"check the path and its permissions; scripts/fetch-model.sh puts the model in the cache directory"});
}

// Closes the descriptor unless the mapping took it.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

FileBytes map_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer,
  // forever; it changes nothing for the regular file that fstat then insists on.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) os_fail(path, "cannot open", errno);
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) os_fail(path, "cannot stat", errno);
  if (!S_ISREG(st.st_mode)) os_fail(path, "not a regular file", EINVAL);
  const auto size = static_cast<std::size_t>(st.st_size);
  // mmap refuses a length of 0; an empty file parses as zero bytes (and is refused as truncated).
  if (size == 0) return copy_bytes({});
  // Copy-on-write: CPU tensors over the weights may be written in place by a
  // user's op; that changes private pages, never the file, and never faults.
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) os_fail(path, "cannot map " + std::to_string(size) + " bytes", errno);
  std::shared_ptr<const void> owner(p, [size, fd](const void* q) {
    ::munmap(const_cast<void*>(q), size);
    ::close(fd);
  });
  closer.fd = -1;
  return {std::move(owner), {static_cast<const std::byte*>(p), size}, fd};
}

FileBytes copy_bytes(std::span<const std::byte> bytes) {
  const std::size_t rounded = (bytes.size() / kPage + 1) * kPage;
  void* p = std::aligned_alloc(kPage, rounded);
  if (!p) throw std::bad_alloc();
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  std::shared_ptr<const void> owner(p, [](const void* q) { std::free(const_cast<void*>(q)); });
  return {std::move(owner), {static_cast<const std::byte*>(p), bytes.size()}};
}

void read_bytes(const FileBytes& f, const std::string& path, std::size_t offset, std::size_t n, void* dst) {
  if (offset > f.bytes.size() || n > f.bytes.size() - offset)
    throw Error(ErrorCode::InvalidArgument,
                "GGUF " + path + ": bytes [" + std::to_string(offset) + ", " + std::to_string(offset + n) +
                    ") are past its end (" + std::to_string(f.bytes.size()) + " bytes)",
                {.op = "gguf"});
  if (f.fd < 0) {
    if (n) std::memcpy(dst, f.bytes.data() + offset, n);
    return;
  }
  auto* out = static_cast<char*>(dst);
  for (std::size_t done = 0; done < n;) {
    const ssize_t got = ::pread(f.fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) os_fail(path, "cannot read " + std::to_string(n) + " bytes at " + std::to_string(offset), errno);
    if (got == 0)
      os_fail(path, "ends before byte " + std::to_string(offset + n) + " (changed since it was opened?)", EIO);
    done += static_cast<std::size_t>(got);
  }
}

}  // namespace torsh::model::detail
