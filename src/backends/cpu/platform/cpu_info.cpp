#include "cpu_info.hpp"

#include <sys/sysinfo.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "thread_pool.hpp"

namespace torsh::cpu {
namespace {

std::uint64_t meminfo_kb(const std::string& key) {
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream is(line.substr(key.size() + 1));
      std::uint64_t kb = 0;
      is >> kb;
      return kb;
    }
  return 0;
}

// A cgroup v2 limit below the machine's memory is what this process can really use.
std::uint64_t cgroup_limit() {
  std::ifstream f("/sys/fs/cgroup/memory.max");
  std::string s;
  if (!(f >> s) || s == "max") return 0;
  try {
    return std::stoull(s);
  } catch (...) {
    return 0;
  }
}

std::uint64_t cgroup_usage() {
  std::ifstream f("/sys/fs/cgroup/memory.current");
  std::uint64_t v = 0;
  f >> v;
  return v;
}

double max_mhz(double cpuinfo_mhz) {
  std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (f >> khz && khz > 0) return khz / 1000.0;
  return cpuinfo_mhz;
}

struct Arch {
  const char* vendor;
  int family, model_lo, model_hi;
  const char* name;
  bool splits_512bit = false;  // 512-bit ops run as two halves on 256-bit units (half the AVX-512 FMA peak)
};

// Server and desktop parts this library is likely to meet.
constexpr Arch kArchs[] = {
    {"AuthenticAMD", 0x17, 0x00, 0x2f, "Zen/Zen+"},
    {"AuthenticAMD", 0x17, 0x30, 0xff, "Zen 2"},
    {"AuthenticAMD", 0x19, 0x00, 0x0f, "Zen 3"},
    {"AuthenticAMD", 0x19, 0x20, 0x5f, "Zen 3"},
    {"AuthenticAMD", 0x19, 0x10, 0x1f, "Zen 4", true},
    {"AuthenticAMD", 0x19, 0x60, 0x7f, "Zen 4", true},
    {"AuthenticAMD", 0x19, 0xa0, 0xaf, "Zen 4c", true},
    {"AuthenticAMD", 0x1a, 0x00, 0xff, "Zen 5"},
    {"GenuineIntel", 6, 0x3f, 0x3f, "Haswell"},
    {"GenuineIntel", 6, 0x4f, 0x4f, "Broadwell"},
    {"GenuineIntel", 6, 0x55, 0x55, "Skylake/Cascade Lake"},
    {"GenuineIntel", 6, 0x6a, 0x6c, "Ice Lake"},
    {"GenuineIntel", 6, 0x8f, 0x8f, "Sapphire Rapids"},
    {"GenuineIntel", 6, 0xcf, 0xcf, "Emerald Rapids"},
    {"GenuineIntel", 6, 0xad, 0xae, "Granite Rapids"},
    {"GenuineIntel", 6, 0x97, 0x9a, "Alder Lake"},
    {"GenuineIntel", 6, 0xb7, 0xb7, "Raptor Lake"},
    {"GenuineIntel", 6, 0xba, 0xbf, "Raptor Lake"},
};

const Arch* find_arch(const std::string& vendor, int family, int model) {
  for (const Arch& a : kArchs)
    if (vendor == a.vendor && family == a.family && model >= a.model_lo && model <= a.model_hi) return &a;
  return nullptr;
}

// Vendor, display family and model straight from cpuid (leaves 0 and 1), for
// the callers that need no more than that; -1 where there is no cpuid.
struct Identity {
  std::string vendor;
  int family = -1, model = -1;
};
Identity cpuid_identity() {
  Identity id;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return id;
  char v[13] = {};
  std::memcpy(v, &b, 4);
  std::memcpy(v + 4, &d, 4);
  std::memcpy(v + 8, &c, 4);
  id.vendor = v;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return id;
  const int base_family = static_cast<int>((a >> 8) & 0xf), base_model = static_cast<int>((a >> 4) & 0xf);
  id.family = base_family == 0xf ? base_family + static_cast<int>((a >> 20) & 0xff) : base_family;
  id.model =
      base_family == 0x6 || base_family == 0xf ? (static_cast<int>((a >> 16) & 0xf) << 4) + base_model : base_model;
#endif
  return id;
}

}  // namespace

bool splits_512bit_ops() {
  static const bool split = [] {
    const Identity id = cpuid_identity();
    const Arch* a = find_arch(id.vendor, id.family, id.model);
    return a != nullptr && a->splits_512bit;
  }();
  return split;
}

bool intel_cpu() {
  static const bool intel = cpuid_identity().vendor == "GenuineIntel";
  return intel;
}

int l1d_ways() {
#ifdef _SC_LEVEL1_DCACHE_ASSOC
  static const int ways = static_cast<int>(std::max(0L, sysconf(_SC_LEVEL1_DCACHE_ASSOC)));
  return ways;
#else
  return 0;
#endif
}

std::int64_t l1d_bytes() {
#ifdef _SC_LEVEL1_DCACHE_SIZE
  static const std::int64_t bytes = [] {
    const long b = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return b > 0 ? std::int64_t{b} : std::int64_t{32} << 10;
  }();
  return bytes;
#else
  return std::int64_t{32} << 10;
#endif
}

std::string cpu_architecture(const std::string& vendor, int family, int model) {
  if (family <= 0) return "";
  std::string s = "family " + std::to_string(family) + " model " + std::to_string(model);
  if (const Arch* a = find_arch(vendor, family, model)) s += std::string(" (") + a->name + ")";
  return s;
}

bool has_feature(const DeviceInfo& info, const char* flag) {
  return std::find(info.features.begin(), info.features.end(), flag) != info.features.end();
}

DeviceInfo query_host_cpu() {
  DeviceInfo d;
  d.index = 0;
  d.kind = DeviceKind::Cpu;
  d.unified_memory = true;
  std::ifstream f("/proc/cpuinfo");
  std::string line, flags;
  double mhz = 0;
  int family = -1, model = -1;
  while (std::getline(f, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string val = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && d.name.empty())
      d.name = val;
    else if (key == "vendor_id" && d.vendor.empty())
      d.vendor = val;
    else if (key == "flags" && flags.empty())
      flags = val;
    else if (key == "cpu MHz" && mhz == 0)
      mhz = std::atof(val.c_str());
    else if (key == "cpu family" && family < 0)
      family = std::atoi(val.c_str());
    else if (key == "model" && model < 0)
      model = std::atoi(val.c_str());
  }
  if (d.name.empty()) d.name = "host CPU";
  static const char* kInteresting[] = {"sse4_2",      "avx",      "avx2",     "fma",         "f16c",
                                       "avx512f",     "avx512bw", "avx512vl", "avx512_bf16", "avx512_vnni",
                                       "avx512_fp16", "amx_bf16", "amx_tile"};
  std::istringstream fs(flags);
  std::vector<std::string> all;
  for (std::string w; fs >> w;) all.push_back(w);
  for (const char* want : kInteresting)
    if (std::find(all.begin(), all.end(), want) != all.end()) d.features.push_back(want);
  d.architecture = cpu_architecture(d.vendor, family, model);
  d.compute_units = default_threads();
  const bool avx512 = has_feature(d, "avx512f"), avx2 = has_feature(d, "avx2") && has_feature(d, "fma");
  d.compute_capability = avx512 ? (has_feature(d, "avx512_bf16") ? "AVX-512 (BF16)" : "AVX-512")
                         : avx2 ? "AVX2+FMA"
                                : "SSE";
  // Two FMA pipes per core, each lane doing a multiply and an add. Zen 4
  // runs a 512-bit FMA as two halves on 256-bit pipes: AVX2's peak.
  const Arch* arch = find_arch(d.vendor, family, model);
  const bool split512 = arch != nullptr && arch->splits_512bit;
  const int lanes = avx512 && !split512 ? 16 : avx2 || avx512 ? 8 : 4;
  d.peak_gflops = d.compute_units * max_mhz(mhz) / 1000.0 * lanes * 2 * 2;
  const HostMemory mem = host_memory();
  d.total_memory = mem.total;
  d.free_memory = mem.available;
  return d;
}

HostMemory host_memory() {
  HostMemory m{meminfo_kb("MemTotal") * 1024, meminfo_kb("MemAvailable") * 1024};
  if (auto lim = cgroup_limit(); lim && lim < m.total) {
    m.total = lim;
    const auto used = cgroup_usage();
    m.available = std::min(m.available, used < lim ? lim - used : 0);
  }
  return m;
}

}  // namespace torsh::cpu
