#include "cache_dir.hpp"

#include <pwd.h>
#include <unistd.h>
#include <cstdlib>
#include <vector>

namespace torsh::detail {
namespace {

std::string absolute_env(const char* name) {
  const char* v = std::getenv(name);
  return v && v[0] == '/' ? v : "";
}

std::string home_from_passwd() {
  struct passwd pw, *found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found && found->pw_dir &&
      found->pw_dir[0] == '/')
    return found->pw_dir;
  return {};
}

}  // namespace

std::string user_cache_root() {
  if (const std::string x = absolute_env("XDG_CACHE_HOME"); !x.empty()) return x + "/torsh";
  if (const std::string h = absolute_env("HOME"); !h.empty()) return h + "/.cache/torsh";
  if (const std::string h = home_from_passwd(); !h.empty()) return h + "/.cache/torsh";
  std::string tmp = absolute_env("TMPDIR");
  if (tmp.empty()) tmp = "/tmp";
  return tmp + "/torsh-" + std::to_string(::getuid());
}

}  // namespace torsh::detail
