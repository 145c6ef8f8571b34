#pragma once
// The commands of the torsh CLI, each taking its options already parsed and
// checked by main.cpp (CLI11).
#include <cstddef>
#include <string>

namespace torsh::cli {

struct InfoOptions {
  bool json = false;
  std::string model;     // a GGUF file: describe it instead of the backends
  bool tensors = false;  // with model: list every tensor
};

struct DemoOptions {
  std::string backend = "auto";
  std::string size = "256";  // validated by demo() against the memory available
};

struct BenchOptions {
  bool json = false;
  bool list = false;  // print the case names (after --filter) and run nothing
  std::string filter;
  std::string backend = "cpu";
  int threads = 2;
  double min_seconds = 0.3;
  std::string profile;  // Chrome trace path; empty: no profiling
  std::size_t profile_max_events = std::size_t(1) << 20;
  bool profile_keep_last = false;
};

struct RunOptions {
  std::string model;  // a GGUF file; empty: the cached SmolLM2-135M-Instruct (scripts/fetch-model.sh)
  std::string prompt;
  bool chat = false;  // wrap the prompt in the model's chat template
  std::string backend = "auto";
  int threads = 0;  // CPU backend threads; 0: the backend's default
  long long max_tokens = 128;
  double temperature = 0.0;  // 0: greedy
  int top_k = 0;
  double top_p = 1.0;
  unsigned long long seed = 0;
  long long ctx = 0;                  // 0: min(trained context, 4096)
  std::string activations = "int16";  // the integer kernels' activation levels: int16 or int8
  std::string kv_type = "f16";        // the KV cache's element type: f16, bf16, f32 or q8_0
  int parallel = 1;                   // continuations of the prompt decoded together
  std::string prompt_file;            // one prompt per non-empty line, all decoded together
  bool mmap = false;                  // CPU: compute on the file's mapped pages (LoadOptions::mmap_weights)
};

int info(const InfoOptions& opt);
int info_model(const InfoOptions& opt);
int demo(const DemoOptions& opt);
// Returns 2 (usage error) when --filter matches no case.
int bench(const BenchOptions& opt);
int run(const RunOptions& opt);

}  // namespace torsh::cli
