// `torsh info MODEL.gguf`: what a GGUF file holds and whether `torsh run` can
// compute with it, read from its header alone (any file this reader parses,
// including ones whose tensor types have no kernels here).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "torsh/model/gguf.hpp"
#include "torsh/model/model.hpp"

namespace torsh::cli {

int info_model(const InfoOptions& opt) {
  using namespace torsh::model;
  const GgufFile f = GgufFile::open(opt.model);
  std::printf("%s: GGUF v%u, %zu metadata keys, %zu tensors, %.1f MiB\n", f.path().c_str(), f.version(),
              f.metadata().size(), f.tensors().size(), static_cast<double>(f.file_size()) / (1024.0 * 1024.0));
  for (const char* key : {"general.architecture", "general.name", "general.file_type"})
    if (const GgufValue* v = f.find(key)) std::printf("  %-22s %s\n", key, v->to_string().c_str());

  struct TypeUse {
    std::size_t tensors = 0;
    std::uint64_t bytes = 0;
    std::string example;
  };
  std::map<std::uint32_t, TypeUse> by_type;
  for (const auto& t : f.tensors()) {
    TypeUse& u = by_type[static_cast<std::uint32_t>(t.type)];
    if (u.tensors++ == 0) u.example = t.name;
    u.bytes += t.nbytes;
  }
  std::printf("  tensor types:\n");
  std::vector<std::string> missing;
  for (const auto& [id, u] : by_type) {
    const auto type = static_cast<GgmlType>(id);
    const bool ok = weight_type_supported(type);
    std::printf("    %-8s %5zu tensors %10.1f MiB  %s\n", std::string(ggml_type_name(type)).c_str(), u.tensors,
                static_cast<double>(u.bytes) / (1024.0 * 1024.0), ok ? "computed here" : "no kernels here");
    if (!ok) missing.push_back(std::string(ggml_type_name(type)) + " (e.g. " + u.example + ")");
  }
  if (missing.empty()) {
    std::printf("  every tensor type has kernels here\n");
  } else {
    std::printf("  torsh run refuses this file: no kernels for");
    for (std::size_t i = 0; i < missing.size(); ++i) std::printf("%s %s", i ? "," : "", missing[i].c_str());
    std::printf("; the library computes with %s\n", weight_types_supported().c_str());
  }
  if (opt.tensors) {
    std::printf("  tensors:\n");
    for (const auto& t : f.tensors()) {
      std::string dims;
      for (std::size_t d = 0; d < t.dims.size(); ++d) dims += (d ? ", " : "") + std::to_string(t.dims[d]);
      std::printf("    %-40s %-8s {%s}\n", t.name.c_str(), std::string(ggml_type_name(t.type)).c_str(), dims.c_str());
    }
  }
  return 0;
}

}  // namespace torsh::cli
