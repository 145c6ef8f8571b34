// Test fixture: a plugin whose driver creation throws.
#include <stdexcept>

#include "torsh/backend/plugin.h"
#include "torsh/version.hpp"

static void* create(char*, size_t) { throw std::runtime_error("fixture driver exploded"); }
static const torsh_plugin_v1 kPlugin = {TORSH_PLUGIN_ABI_VERSION, "metal", TORSH_BUILD_ID, create};
TORSH_PLUGIN_EXPORT const torsh_plugin_v1* torsh_backend_plugin_entry(void) { return &kPlugin; }
