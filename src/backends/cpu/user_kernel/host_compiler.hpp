#pragma once
// The system C++ compiler that builds user kernels: found at each build
// ($TORSH_CXX, then $CXX, then c++ on PATH) and run without a shell, so
// nothing in a kernel's defines or options is ever interpreted as a command.
#include <optional>
#include <string>
#include <vector>

namespace torsh::cpu::uk {

struct HostCompiler {
  std::string path;                  // the resolved executable
  std::vector<std::string> leading;  // arguments that came with it ("ccache g++" -> {"g++"} after "ccache")
  std::string requested;             // as the user or PATH named it, for messages
  bool clang = false;
};

// nullopt when no compiler is found; `why` then says where it looked.
std::optional<HostCompiler> find_host_compiler(std::string* why);

// "g++ (Debian 12.2.0-14) 12.2.0" (the first line of --version), cached per path.
std::string compiler_version(const HostCompiler& c);

struct ProcessResult {
  int exit_status = -1;  // 128 + signal when killed by one; -1 when it could not start
  std::string output;    // stdout and stderr, interleaved as written
};
// Runs argv[0] (a path) with argv, stdin from /dev/null.
ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace torsh::cpu::uk
