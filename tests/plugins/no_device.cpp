// Test fixture: a plugin whose driver finds no device and says why.
#include <cstdio>

#include "torsh/backend/plugin.h"
#include "torsh/version.hpp"

static void* create(char* err, size_t len) {
  std::snprintf(err, len, "no fixture device: the fixture driver has nothing to offer");
  return nullptr;
}
static const torsh_plugin_v1 kPlugin = {TORSH_PLUGIN_ABI_VERSION, "metal", TORSH_BUILD_ID, create};
TORSH_PLUGIN_EXPORT const torsh_plugin_v1* torsh_backend_plugin_entry(void) { return &kPlugin; }
