#pragma once
// The parameters of a C-family kernel entry (Torsh dialect, OpenCL C, CUDA),
// read from the source: what the launch checks arguments against before a
// driver sees them. A parser of declarations, not of C: it finds the entry's
// definition after a kernel keyword and classifies each parameter by its
// qualifiers and type names. Anything it cannot name stays Unknown, which the
// launch accepts.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torsh/runtime/kernel_source.hpp"

namespace torsh::detail {

struct ParsedEntry {
  std::vector<KernelParam> params;
  std::string local_param;  // a parameter in work-group memory (not supported), "" if none
};

// The entry's parameters, or nullopt when no kernel definition of `entry` is found.
std::optional<ParsedEntry> parse_c_entry(std::string_view source, std::string_view entry);

// `source` with comments replaced by spaces (newlines kept, so lines still count).
std::string strip_comments(std::string_view source);

}  // namespace torsh::detail
