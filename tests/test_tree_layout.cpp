// The tree's layout, checked so that it cannot drift. An op family: every
// kind of TORSH_OP_KINDS has its family's file in the op layer and in every
// backend folder, under the family's name, or an entry below saying where it
// is instead and why. The layers: the user API (include/torsh) includes no
// plugin-author header (include/torsh/backend), and the runtime includes
// nothing from the op layer above it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
// GCC 12 reports std::regex's own std::function members as maybe
// uninitialized when sanitizers change its inlining; the warning is about
// libstdc++, not this file.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <set>
#include <string>
#include <vector>

#include "torsh/runtime/op_kinds.hpp"

namespace fs = std::filesystem;
using torsh::rt::kAllOpKinds;
using torsh::rt::op_kind_family;
using torsh::rt::op_kind_name;

namespace {

const fs::path kSource = fs::path(__FILE__).parent_path().parent_path() / "src";

// Where each layer keeps a family's code: folder and file suffix.
struct Layer {
  const char* folder;
  const char* suffix;
};
const Layer kLayers[] = {
    {"ops", ".cpp"},                       // validation and the launch
    {"backends/cpu", ".cpp"},              // the CPU kernels (helpers in sub-folders)
    {"backends/opencl", ".cpp"},           // OpenCL host code
    {"backends/cuda", ".cu"},              // CUDA host code and kernels (ROCm builds the same files)
    {"backends/webgpu", ".cpp"},           // WebGPU host code
    {"backends/gpu/kernels", ".kern.h"},   // the shared C-family kernel body
    {"backends/webgpu/kernels", ".wgsl"},  // the WGSL kernel
};

// A family whose file in one layer has another name, and why.
struct Elsewhere {
  std::string file;
  std::string why;
};
const std::map<std::pair<std::string, std::string>, Elsewhere> kElsewhere = {
    {{"ops", "rnn_gates"},
     {"rnn.cpp", "the LSTM / GRU layers of torsh/ops/rnn.hpp are the op layer's entry to the gates kernel"}},
    {{"ops", "sparse_matmul"},
     {"sparse.cpp", "the sparse tensors of torsh/ops/sparse.hpp (CSR, COO) and their products, in one file"}},
};

std::set<std::string> families() {
  std::set<std::string> out;
  for (auto k : kAllOpKinds) out.insert(op_kind_family(k));
  return out;
}

}  // namespace

TEST(OpFamilies, EveryFamilyHasItsFileInEveryLayer) {
  ASSERT_TRUE(fs::is_directory(kSource / "ops")) << kSource << " is not the source tree";
  for (const std::string& family : families())
    for (const Layer& layer : kLayers) {
      const fs::path dir = kSource / layer.folder;
      const fs::path own = dir / (family + layer.suffix);
      const auto it = kElsewhere.find({layer.folder, family});
      if (it == kElsewhere.end()) {
        EXPECT_TRUE(fs::is_regular_file(own))
            << "op family '" << family << "' has no " << own.lexically_relative(kSource.parent_path()).string()
            << ": name the file after the family (op_kind_family), or list it in kElsewhere with the reason";
        continue;
      }
      EXPECT_FALSE(fs::exists(own)) << own << " exists now: drop the kElsewhere entry for '" << family << "'";
      EXPECT_TRUE(fs::is_regular_file(dir / it->second.file))
          << "kElsewhere says '" << family << "' lives in " << layer.folder << "/" << it->second.file << " ("
          << it->second.why << "), which does not exist";
    }
}

TEST(OpFamilies, NoFileIsNamedAfterAKindInsteadOfItsFamily) {
  // cast.cpp beside copy.cpp, or qmatmul.cpp beside quant.cpp, would split a
  // family between two names again.
  for (auto k : kAllOpKinds) {
    const std::string kind = op_kind_name(k), family = op_kind_family(k);
    if (kind == family) continue;
    for (const Layer& layer : kLayers) {
      const fs::path stray = kSource / layer.folder / (kind + layer.suffix);
      EXPECT_FALSE(fs::exists(stray)) << stray << " is named after kind '" << kind << "'; its family '" << family
                                      << "' keeps it in " << family << layer.suffix;
    }
  }
}

TEST(OpFamilies, FamilyNamesAreFileNames) {
  for (auto k : kAllOpKinds) {
    const std::string family = op_kind_family(k);
    ASSERT_FALSE(family.empty()) << op_kind_name(k);
    for (char c : family) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << family;
  }
}

namespace {

// Every #include "..." line of the files under `dir` with one of `exts`, as (file, included path).
std::vector<std::pair<fs::path, std::string>> includes_under(const fs::path& dir,
                                                             std::initializer_list<const char*> exts) {
  std::vector<std::pair<fs::path, std::string>> out;
  const std::regex inc(R"re(^\s*#\s*include\s*"([^"]+)")re");
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    bool wanted = false;
    for (const char* x : exts) wanted |= e.path().extension() == x;
    if (!wanted) continue;
    std::ifstream in(e.path());
    std::string line;
    std::smatch m;
    while (std::getline(in, line))
      if (std::regex_search(line, m, inc)) out.emplace_back(e.path(), m[1].str());
  }
  return out;
}

}  // namespace

TEST(Layers, TheUserApiIncludesNoPluginAuthorHeader) {
  const fs::path include = kSource.parent_path() / "include" / "torsh";
  std::size_t seen = 0;
  for (const char* part : {"core", "runtime", "ops", "model"})
    for (const auto& [file, path] : includes_under(include / part, {".hpp", ".h"})) {
      ++seen;
      EXPECT_EQ(path.rfind("torsh/backend/", 0), std::string::npos)
          << file.lexically_relative(include).string() << " includes " << path
          << ": the user API forward-declares what it names from torsh/backend/";
    }
  EXPECT_GT(seen, 20u);
  std::ifstream umbrella(include / "torsh.hpp");
  std::string line;
  while (std::getline(umbrella, line))
    EXPECT_EQ(line.find("torsh/backend/"), std::string::npos) << "torsh.hpp: " << line;
}

TEST(Layers, TheRuntimeCallsNothingInTheOpLayer) {
  std::size_t seen = 0;
  for (const auto& [file, path] : includes_under(kSource / "runtime", {".cpp", ".hpp"})) {
    ++seen;
    EXPECT_TRUE(path.find("torsh/ops/") == std::string::npos && path.find("ops/") != 0 &&
                path.find("../ops/") == std::string::npos)
        << file.filename().string() << " includes " << path
        << ": Tensor methods that run ops are defined in src/ops (copy.cpp), not in the runtime";
  }
  EXPECT_GT(seen, 20u);
}
