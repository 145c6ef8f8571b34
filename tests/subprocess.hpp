#pragma once
// Runs a command line through /bin/sh and returns its exit status and its
// stdout and stderr together, for tests of the torsh CLI and of how the
// library reads its environment (which must be set before a process starts).
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace torsh::test {

struct Run {
  int status = -1;  // exit status, or 128 + signal
  std::string out;  // stdout and stderr
};

inline Run run(const std::string& command) {
  Run r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int w = ::pclose(p);
  r.status = WIFEXITED(w) ? WEXITSTATUS(w) : WIFSIGNALED(w) ? 128 + WTERMSIG(w) : -1;
  return r;
}

// The torsh CLI of this build, or empty when the tools are not built.
inline std::string torsh_cli() {
#ifdef TORSH_TEST_CLI
  return TORSH_TEST_CLI;
#else
  return {};
#endif
}

}  // namespace torsh::test
