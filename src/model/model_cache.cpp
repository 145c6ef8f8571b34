#include "torsh/model/model_cache.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "torsh/core/error.hpp"

namespace torsh::model {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> home_dir() {
  if (auto h = env("HOME")) return h;
  // No HOME (a service account, a bare container): ask the password database.
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir && *pw->pw_dir) return std::string(pw->pw_dir);
  return std::nullopt;
}

}  // namespace

std::string model_cache_dir() {
  if (auto dir = env("TORSH_MODEL_DIR")) return *dir;
  if (auto xdg = env("XDG_CACHE_HOME")) return *xdg + "/torsh/models";
  if (auto home = home_dir()) return *home + "/.cache/torsh/models";
  throw Error(ErrorCode::InvalidArgument,
              "no model cache directory: TORSH_MODEL_DIR, XDG_CACHE_HOME and HOME are unset", {.op = "model_cache"},
              {"set TORSH_MODEL_DIR to the directory that holds the models"});
}

std::optional<std::string> find_model(std::string_view file_name) {
  const std::filesystem::path path = std::filesystem::path(model_cache_dir()) / file_name;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  return path.string();
}

}  // namespace torsh::model
