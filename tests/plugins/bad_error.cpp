// Test fixture: a plugin whose driver fills the whole error buffer with no
// terminator, invalid UTF-8 and a terminal escape sequence.
#include <cstddef>

#include "torsh/backend/plugin.h"
#include "torsh/version.hpp"

static void* create(char* err, size_t len) {
  static const char kWords[] = "bad fixture error \xff\xfe \xc3 \x1b[2J ";
  for (size_t i = 0; i < len; ++i) err[i] = kWords[i % (sizeof kWords - 1)];
  return nullptr;
}
static const torsh_plugin_v1 kPlugin = {TORSH_PLUGIN_ABI_VERSION, "metal", TORSH_BUILD_ID, create};
TORSH_PLUGIN_EXPORT const torsh_plugin_v1* torsh_backend_plugin_entry(void) { return &kPlugin; }
