// Test fixture: a plugin built for a future ABI version.
#include "torsh/backend/plugin.h"
#include "torsh/version.hpp"

static void* create(char*, size_t) { return nullptr; }
static const torsh_plugin_v1 kPlugin = {TORSH_PLUGIN_ABI_VERSION + 1, "metal", TORSH_BUILD_ID, create};
TORSH_PLUGIN_EXPORT const torsh_plugin_v1* torsh_backend_plugin_entry(void) { return &kPlugin; }
