#pragma once
#include <string>
#include <vector>

namespace torsh::cli {
using Args = std::vector<std::string>;
int info(const Args& args);
int demo(const Args& args);
int bench(const Args& args);
// Value after `--name`, or `fallback`.
std::string option(const Args& args, const std::string& name, const std::string& fallback = "");
bool flag(const Args& args, const std::string& name);
}  // namespace torsh::cli
