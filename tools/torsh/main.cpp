// torsh: the command-line front door (info, demo, bench). Options are parsed by
// CLI11: every command has --help, and an unknown command, an unknown option or
// a bad value is an error with exit status 2.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <system_error>

#include "commands.hpp"
#include "torsh/torsh.hpp"

namespace {

constexpr int kUsageError = 2;

// A backend name torsh knows (cpu, cuda, rocm, metal, webgpu, opencl, auto).
const CLI::Validator kBackendName(
    [](std::string& v) -> std::string {
      if (torsh::backend_from_name(v)) return {};
      return "unknown backend '" + v + "' (cpu, cuda, rocm, metal, webgpu, opencl, auto)";
    },
    "BACKEND", "backend name");

// A finite number >= 0 (CLI11's NonNegativeNumber lets NaN through); `name`
// is what --help shows for the value.
CLI::Validator finite_non_negative(const std::string& name) {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        double d = 0;
        if (!CLI::detail::lexical_cast(v, d)) return "'" + v + "' is not a number";
        if (!std::isfinite(d) || d < 0) return "must be a finite number >= 0, got " + v;
        return {};
      },
      name + ">=0", "finite non-negative number");
}

// A whole number in 0 .. 2^64 - 1, written in decimal: CLI11's own unsigned
// parse wraps "-1" to 2^64 - 1 and saturates past the top.
const CLI::Validator kUnsigned64(
    [](std::string& v) -> std::string {
      std::uint64_t n = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (v.empty() || ec == std::errc::invalid_argument || end != v.data() + v.size())
        return "must be a whole number 0 .. 18446744073709551615, got '" + v + "'";
      if (ec == std::errc::result_out_of_range) return "must be at most 18446744073709551615, got " + v;
      return {};
    },
    "0..2^64-1", "unsigned 64-bit integer");

// A probability in (0, 1] (top-p: 0 would keep no token).
const CLI::Validator kProbability(
    [](std::string& v) -> std::string {
      double d = 0;
      if (!CLI::detail::lexical_cast(v, d)) return "'" + v + "' is not a number";
      if (!(d > 0 && d <= 1)) return "must be in (0, 1], got " + v;
      return {};
    },
    "(0,1]", "probability");

int run(int argc, char** argv) {
  CLI::App app{
      "torsh: one API over every compute device (CPU, OpenCL, CUDA, ROCm, ...).\n"
      "Plugins are searched in TORSH_BACKEND_PATH, then next to libtorsh.",
      "torsh"};
  app.set_version_flag("--version", std::string("torsh ") + TORSH_VERSION + " (" + TORSH_BUILD_ID + ")",
                       "Print the version and exit");
  app.require_subcommand(1, 1);
  app.fallthrough(false);

  torsh::cli::InfoOptions info;
  auto* info_cmd = app.add_subcommand("info", "Backends, devices, and why each backend was or was not chosen");
  info_cmd->add_flag("--json", info.json, "One JSON object instead of the text report");
  info_cmd->add_option("model", info.model,
                       "A GGUF file: its architecture, tensor types and whether `torsh run` computes with them");
  info_cmd->add_flag("--tensors", info.tensors, "With a model: list every tensor's type and dimensions");

  torsh::cli::DemoOptions demo;
  auto* demo_cmd = app.add_subcommand(
      "demo", "softmax(A @ B) on the auto-selected (or named) device, checked against an f64 CPU reference");
  demo_cmd->add_option("--backend", demo.backend, "Device to run on")->capture_default_str()->check(kBackendName);
  demo_cmd->add_option("--size", demo.size, "A is N x 2N, B is 2N x N")->capture_default_str();

  torsh::cli::BenchOptions bench;
  std::string keep = "first";
  auto* bench_cmd = app.add_subcommand("bench", "The benchmark suite (BENCHMARKS.md)");
  bench_cmd->add_flag("--json", bench.json, "One JSON object per line");
  bench_cmd->add_flag("--list", bench.list, "Print the names of the cases (those --filter selects) and run none");
  bench_cmd->add_option("--filter", bench.filter, "Run only the cases whose name contains S (an error if none does)")
      ->type_name("S");
  bench_cmd->add_option("--backend", bench.backend, "Backend to run on")->capture_default_str()->check(kBackendName);
  bench_cmd->add_option("--threads", bench.threads, "CPU backend threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  bench_cmd->add_option("--min-seconds", bench.min_seconds, "Time each case for at least this long (after 3 runs)")
      ->capture_default_str()
      ->check(finite_non_negative("SECONDS"));
  auto* profile = bench_cmd
                      ->add_option("--profile", bench.profile,
                                   "Profile the run: write a Chrome trace (https://ui.perfetto.dev) and print "
                                   "the per-op table")
                      ->type_name("trace.json");
  bench_cmd
      ->add_option("--profile-max-events", bench.profile_max_events,
                   "Records kept in the trace (the table counts every op); 0: no limit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->needs(profile);
  bench_cmd->add_option("--profile-keep", keep, "Which records the trace keeps past the cap")
      ->capture_default_str()
      ->check(CLI::IsMember({"first", "last"}))
      ->needs(profile);

  torsh::cli::RunOptions runo;
  auto* run_cmd = app.add_subcommand(
      "run", "Generate text from a GGUF language model (default: the cached SmolLM2-135M-Instruct), with tokens/s");
  run_cmd
      ->add_option(
          "model", runo.model,
          "GGUF file (llama, qwen2, qwen3, gemma2, gemma3 or phi3 architecture; F32, F16, BF16, Q4_0, Q4_1, Q5_0, "
          "Q5_1, Q8_0, Q2_K "
          "to Q6_K, IQ4_NL or "
          "IQ4_XS weights)")
      ->type_name("MODEL.gguf");
  auto* prompt_opt = run_cmd->add_option("-p,--prompt", runo.prompt, "The prompt");
  auto* prompt_file_opt =
      run_cmd->add_option("--prompt-file", runo.prompt_file, "Prompts, one per line, decoded together (batched)")
          ->check(CLI::ExistingFile)
          ->excludes(prompt_opt);
  prompt_opt->excludes(prompt_file_opt);
  run_cmd
      ->add_option("--parallel", runo.parallel,
                   "Continuations of the prompt decoded together, sequence i sampled with seed + i")
      ->capture_default_str()
      ->check(CLI::Range(1, 256))
      ->excludes(prompt_file_opt);
  run_cmd->add_flag("--chat", runo.chat, "Wrap the prompt in the model's chat template (a user message)");
  run_cmd->add_option("--backend", runo.backend, "Device to run on")->capture_default_str()->check(kBackendName);
  run_cmd->add_option("--threads", runo.threads, "CPU backend threads (0: the backend's default)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  run_cmd->add_option("-n,--max-tokens", runo.max_tokens, "Tokens to generate at most")
      ->capture_default_str()
      ->check(CLI::Range(0LL, 1LL << 30));
  run_cmd->add_option("--temp", runo.temperature, "Sampling temperature; 0: greedy")
      ->capture_default_str()
      ->check(finite_non_negative("TEMPERATURE"));
  run_cmd->add_option("--top-k", runo.top_k, "Sample from the K most likely tokens; 0: all")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  run_cmd->add_option("--top-p", runo.top_p, "Sample from the smallest set of tokens with probability P; 1: all")
      ->capture_default_str()
      ->check(kProbability);
  run_cmd->add_option("--seed", runo.seed, "Sampling seed")->capture_default_str()->check(kUnsigned64);
  run_cmd->add_option("--ctx", runo.ctx, "Context length (0: the model's, at most 4096)")
      ->capture_default_str()
      ->check(CLI::Range(0LL, 1LL << 24));
  run_cmd
      ->add_option("--activations", runo.activations,
                   "How the integer kernels quantize activations: int16 (accurate) or int8 (llama.cpp's numerics, "
                   "faster prompts)")
      ->capture_default_str()
      ->check(CLI::IsMember({"int16", "int8"}));
  run_cmd
      ->add_option("--kv-type", runo.kv_type,
                   "The KV cache's element type: f16 (llama.cpp's default), bf16, f32 or q8_0 (CPU only)")
      ->capture_default_str()
      ->check(CLI::IsMember({"f16", "bf16", "f32", "q8_0"}));
  run_cmd->add_flag("--mmap", runo.mmap,
                    "CPU: compute on the file's mapped pages (shared with other processes) instead of reading the "
                    "weights into huge pages at load (faster decode)");

  // `torsh help [command]`, as before CLI11.
  std::string help_topic;
  auto* help_cmd = app.add_subcommand("help", "Print this help, or a command's");
  help_cmd->add_option("command", help_topic, "Command to describe")
      ->check(CLI::IsMember({"info", "demo", "bench", "run"}));

  run_cmd->callback([&] {
    if (runo.prompt_file.empty() && prompt_opt->count() == 0) throw CLI::RequiredError("--prompt or --prompt-file");
  });

  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return kUsageError;
  }
  const std::string first = argv[1];
  if (!first.empty() && first[0] != '-' && first != "info" && first != "demo" && first != "bench" && first != "run" &&
      first != "help") {
    std::fprintf(stderr,
                 "torsh: unknown command '%s'; the commands are info, demo, bench, run and help\n"
                 "Run `torsh --help` for more.\n",
                 argv[1]);
    return kUsageError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Named after the command being parsed, with where its options are described.
    const auto parsed = app.get_subcommands();
    const std::string where = parsed.empty() ? "torsh" : "torsh " + parsed.front()->get_name();
    std::fprintf(stderr, "%s: %s\nRun `%s --help` for the options.\n", where.c_str(), e.what(), where.c_str());
    return kUsageError;
  }
  bench.profile_keep_last = keep == "last";

  const std::string cmd = app.get_subcommands().front()->get_name();
  if (cmd == "help") {
    std::fputs((help_topic.empty() ? app.help() : app.get_subcommand(help_topic)->help("torsh")).c_str(), stdout);
    return 0;
  }
  try {
    if (cmd == "info") return torsh::cli::info(info);
    if (cmd == "demo") return torsh::cli::demo(demo);
    if (cmd == "run") return torsh::cli::run(runo);
    return torsh::cli::bench(bench);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torsh %s: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
