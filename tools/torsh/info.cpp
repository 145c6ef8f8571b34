#include <cstdio>
#include <sstream>

#include "commands.hpp"
#include "torsh/torsh.hpp"

namespace torsh::cli {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      o += ' ';
      continue;
    }
    o += c;
  }
  return o;
}

std::string info_json() {
  std::ostringstream os;
  os << "{\"version\":\"" << TORSH_VERSION << "\",\"backends\":[";
  bool first = true;
  for (const auto& st : backend_statuses()) {
    os << (first ? "" : ",") << "{\"type\":\"" << backend_key(st.type)
       << "\",\"available\":" << (st.available ? "true" : "false") << ",\"reason\":\"" << esc(st.reason)
       << "\",\"source\":\"" << esc(st.source) << "\",\"version\":\"" << esc(st.version) << "\",\"devices\":[";
    first = false;
    bool fd = true;
    for (const auto& d : st.devices) {
      os << (fd ? "" : ",") << "{\"index\":" << d.index << ",\"name\":\"" << esc(d.name)
         << "\",\"total_memory\":" << d.total_memory
         << ",\"free_memory\":" << (d.free_memory ? std::to_string(*d.free_memory) : "null")
         << ",\"compute_units\":" << d.compute_units << ",\"compute_capability\":\"" << esc(d.compute_capability)
         << "\",\"unified_memory\":" << (d.unified_memory ? "true" : "false")
         << ",\"software\":" << (d.software ? "true" : "false") << ",\"peak_gflops\":" << d.peak_gflops
         << ",\"architecture\":\"" << esc(d.architecture) << "\",\"kernels\":{";
      for (std::size_t i = 0; i < d.kernel_variants.size(); ++i)
        os << (i ? "," : "") << "\"" << esc(d.kernel_variants[i].first) << "\":\"" << esc(d.kernel_variants[i].second)
           << "\"";
      os << "}}";
      fd = false;
    }
    os << "]}";
  }
  const auto sel = explain_selection(0);
  os << "],\"recommended\":\"" << sel.chosen.to_string() << "\",\"selection\":[";
  for (std::size_t i = 0; i < sel.reasons.size(); ++i) os << (i ? "," : "") << "\"" << esc(sel.reasons[i]) << "\"";
  os << "]}";
  return os.str();
}

}  // namespace

int info(const InfoOptions& opt) {
  if (!opt.model.empty()) return info_model(opt);
  if (opt.json) {
    std::puts(info_json().c_str());
    return 0;
  }
  std::printf("torsh %s\n\n", TORSH_VERSION);
  std::fputs(backend_summary().c_str(), stdout);
  std::printf("\nPlugin search path:");
  for (const auto& d : plugin_search_path()) std::printf(" %s", d.c_str());
  std::printf("\n");
  return 0;
}

}  // namespace torsh::cli
