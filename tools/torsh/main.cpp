// torsh: the command-line front door (info, demo).
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "torsh/torsh.hpp"

namespace torsh::cli {

std::string option(const Args& args, const std::string& name, const std::string& fallback) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == name) return args[i + 1];
  return fallback;
}

bool flag(const Args& args, const std::string& name) {
  for (const auto& a : args)
    if (a == name) return true;
  return false;
}

}  // namespace torsh::cli

namespace {
void usage() {
  std::puts(
      "usage: torsh <command> [options]\n"
      "  info [--json]                 backends, devices, and why each backend was or was not chosen\n"
      "  demo [--backend NAME] [--size N]\n"
      "                                softmax(A @ B) on the auto-selected (or named) device,\n"
      "                                checked against an f64 CPU reference\n"
      "  bench [--json] [--filter S] [--backend NAME] [--threads N] [--min-seconds T] [--profile trace.json]\n"
      "                                the benchmark suite (BENCHMARKS.md); one JSON object per line with --json\n"
      "  --version                     print the version\n"
      "Plugins are searched in TORSH_BACKEND_PATH, then next to libtorsh.");
}
}  // namespace

int main(int argc, char** argv) {
  torsh::cli::Args args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    usage();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::printf("torsh %s (%s)\n", TORSH_VERSION, TORSH_BUILD_ID);
    return 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  try {
    if (cmd == "info") return torsh::cli::info(args);
    if (cmd == "demo") return torsh::cli::demo(args);
    if (cmd == "bench") return torsh::cli::bench(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torsh %s: %s\n", cmd.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "torsh: unknown command '%s'\n", cmd.c_str());
  usage();
  return 2;
}
