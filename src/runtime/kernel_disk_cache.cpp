#include "kernel_disk_cache.hpp"

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "cache_dir.hpp"
#include "sha256.hpp"

namespace torsh::detail {
namespace {

constexpr char kMagic[8] = {'T', 'O', 'R', 'S', 'H', 'K', 'C', '1'};
// Upper bounds that keep a corrupt length field from allocating wildly.
constexpr std::uint64_t kMaxKey = 1 << 20, kMaxLog = 16 << 20, kMaxPayload = std::uint64_t(1) << 31;

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

bool get_u64(std::istream& in, std::uint64_t& v) {
  unsigned char b[8];
  if (!in.read(reinterpret_cast<char*>(b), 8)) return false;
  v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t(b[i]) << (8 * i);
  return true;
}

// Keeps the directory bounded: beyond kMaxEntries files the least recently
// written go (an entry is rebuilt if it is wanted again), and temporary files a
// crashed writer left behind are removed once they are an hour old.
constexpr std::size_t kMaxEntries = 2048;

void prune(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const auto t = fs::last_write_time(p, ec);
    if (ec) continue;
    if (p.filename().string().find(".tmp.") != std::string::npos) {
      if (now - t > std::chrono::hours(1)) fs::remove(p, ec);
    } else if (p.extension() == ".bin") {
      entries.emplace_back(t, p);
    }
  }
  if (entries.size() <= kMaxEntries) return;
  std::sort(entries.begin(), entries.end());
  for (std::size_t i = 0; i + kMaxEntries < entries.size(); ++i) fs::remove(entries[i].second, ec);
}

}  // namespace

const std::string& kernel_cache_directory() {
  static const std::string dir = [] {
    const char* e = std::getenv("TORSH_KERNEL_CACHE_DIR");
    if (e && *e) {
      const std::string v = e;
      if (v == "off" || v == "0" || v == "none") return std::string();
      return v;
    }
    return user_cache_root() + "/kernels";
  }();
  return dir;
}

std::string kernel_cache_file(const std::string& dir, const std::string& key) {
  return dir + "/" + sha256_hex(key) + ".bin";
}

std::optional<CachedKernel> read_cached_kernel(const std::string& path, const std::string& key, std::string& problem) {
  problem.clear();
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  char magic[8];
  std::uint64_t key_len = 0, log_len = 0, payload_len = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) {
    problem = "not a kernel cache file (bad header)";
    return std::nullopt;
  }
  if (!get_u64(in, key_len) || key_len > kMaxKey) {
    problem = "truncated or corrupt header";
    return std::nullopt;
  }
  std::string stored_key(key_len, '\0');
  if (!in.read(stored_key.data(), static_cast<std::streamsize>(key_len))) {
    problem = "truncated key";
    return std::nullopt;
  }
  if (stored_key != key) {
    problem = "written for another build (stale key)";
    return std::nullopt;
  }
  CachedKernel k;
  unsigned char digest[32];
  if (!get_u64(in, log_len) || log_len > kMaxLog || !get_u64(in, payload_len) || payload_len > kMaxPayload ||
      !in.read(reinterpret_cast<char*>(digest), 32)) {
    problem = "truncated or corrupt header";
    return std::nullopt;
  }
  k.log.resize(log_len);
  k.bytes.resize(payload_len);
  if (!in.read(k.log.data(), static_cast<std::streamsize>(log_len)) ||
      !in.read(reinterpret_cast<char*>(k.bytes.data()), static_cast<std::streamsize>(payload_len))) {
    problem = "truncated payload";
    return std::nullopt;
  }
  if (in.peek() != std::char_traits<char>::eof()) {
    problem = "trailing bytes after the payload";
    return std::nullopt;
  }
  Sha256 h;
  h.update(k.bytes);
  if (std::memcmp(h.digest().data(), digest, 32) != 0) {
    problem = "payload checksum mismatch (corrupt)";
    return std::nullopt;
  }
  return k;
}

bool write_cached_kernel(const std::string& path, const std::string& key, const CachedKernel& k, std::string& problem) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    problem = "cannot create " + target.parent_path().string() + " (" + ec.message() + ")";
    return false;
  }
  std::string header(kMagic, 8);
  put_u64(header, key.size());
  header += key;
  put_u64(header, k.log.size());
  put_u64(header, k.bytes.size());
  Sha256 h;
  h.update(k.bytes);
  const auto d = h.digest();
  header.append(reinterpret_cast<const char*>(d.data()), d.size());
  header += k.log;
  // A name no other process or thread picks: pid plus a random suffix.
  std::random_device rd;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(k.bytes.data()), static_cast<std::streamsize>(k.bytes.size()));
    out.flush();
    if (!out) {
      problem = "cannot write " + tmp;
      out.close();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    problem = "cannot rename " + tmp + " to " + path + " (" + ec.message() + ")";
    fs::remove(tmp, ec);
    return false;
  }
  prune(target.parent_path());
  return true;
}

}  // namespace torsh::detail
