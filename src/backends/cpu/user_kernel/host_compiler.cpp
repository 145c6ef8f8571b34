#include "host_compiler.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

extern char** environ;

namespace torsh::cpu::uk {

namespace {

bool executable(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
}

std::optional<std::string> resolve(const std::string& program) {
  if (program.find('/') != std::string::npos) return executable(program) ? std::optional(program) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (executable(candidate)) return candidate;
  }
  return std::nullopt;
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

}  // namespace

std::optional<HostCompiler> find_host_compiler(std::string* why) {
  std::string requested = "c++", source = "PATH";
  if (const char* v = std::getenv("TORSH_CXX"); v && *v)
    requested = v, source = "$TORSH_CXX";
  else if (const char* c = std::getenv("CXX"); c && *c)
    requested = c, source = "$CXX";
  auto words = split_words(requested);
  if (words.empty()) words.push_back("c++");
  auto resolved = resolve(words[0]);
  if (!resolved) {
    if (why)
      *why = "no C++ compiler: '" + words[0] + "' (from " + source + ") is not an executable" +
             (words[0].find('/') == std::string::npos ? " on PATH" : "");
    return std::nullopt;
  }
  HostCompiler c;
  c.path = *resolved;
  c.leading.assign(words.begin() + 1, words.end());
  c.requested = requested;
  c.clang = compiler_version(c).find("clang") != std::string::npos;
  return c;
}

ProcessResult run_process(const std::vector<std::string>& argv) {
  ProcessResult r;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    r.output = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    r.output = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return r;
  }
  char buf[8192];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0)
      r.output.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return r;  // SIGCHLD ignored by the application: status unknown
  }
  if (WIFEXITED(status))
    r.exit_status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.exit_status = 128 + WTERMSIG(status);
  return r;
}

std::string compiler_version(const HostCompiler& c) {
  static std::mutex mu;
  static auto* cache = new std::map<std::string, std::string>;
  const std::string key = c.path + "\n" + [&] {
    std::string s;
    for (const auto& a : c.leading) s += a + " ";
    return s;
  }();
  {
    std::lock_guard lk(mu);
    if (auto it = cache->find(key); it != cache->end()) return it->second;
  }
  std::vector<std::string> argv{c.path};
  argv.insert(argv.end(), c.leading.begin(), c.leading.end());
  argv.push_back("--version");
  const ProcessResult r = run_process(argv);
  std::string first = r.output.substr(0, r.output.find('\n'));
  if (r.exit_status != 0 || first.empty()) first = "unknown version";
  std::lock_guard lk(mu);
  return cache->emplace(key, first).first->second;
}

}  // namespace torsh::cpu::uk
