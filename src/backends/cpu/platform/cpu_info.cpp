#include "cpu_info.hpp"

#include <sys/sysinfo.h>

#include <algorithm>
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
  try { return std::stoull(s); } catch (...) { return 0; }
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

}  // namespace

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
  while (std::getline(f, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string val = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && d.name.empty()) d.name = val;
    else if (key == "vendor_id" && d.vendor.empty()) d.vendor = val;
    else if (key == "flags" && flags.empty()) flags = val;
    else if (key == "cpu MHz" && mhz == 0) mhz = std::atof(val.c_str());
  }
  if (d.name.empty()) d.name = "host CPU";
  static const char* kInteresting[] = {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                                       "avx512_bf16", "avx512_vnni", "avx512_fp16", "amx_bf16", "amx_tile"};
  std::istringstream fs(flags);
  std::vector<std::string> all;
  for (std::string w; fs >> w;) all.push_back(w);
  for (const char* want : kInteresting)
    if (std::find(all.begin(), all.end(), want) != all.end()) d.features.push_back(want);
  d.compute_units = default_threads();
  const bool avx512 = has_feature(d, "avx512f"), avx2 = has_feature(d, "avx2") && has_feature(d, "fma");
  d.compute_capability = avx512 ? (has_feature(d, "avx512_bf16") ? "AVX-512 (BF16)" : "AVX-512")
                                : avx2 ? "AVX2+FMA" : "SSE";
  // Two FMA pipes per core, each lane doing a multiply and an add.
  const int lanes = avx512 ? 16 : avx2 ? 8 : 4;
  d.peak_gflops = d.compute_units * max_mhz(mhz) / 1000.0 * lanes * 2 * 2;
  std::uint64_t total = meminfo_kb("MemTotal") * 1024, avail = meminfo_kb("MemAvailable") * 1024;
  if (auto lim = cgroup_limit(); lim && lim < total) {
    total = lim;
    const auto used = cgroup_usage();
    avail = std::min(avail, used < lim ? lim - used : 0);
  }
  d.total_memory = total;
  d.free_memory = avail;
  return d;
}

}  // namespace torsh::cpu
