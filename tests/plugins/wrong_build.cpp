// Test fixture: a plugin built by another compiler / torsh version.
#include "torsh/backend/plugin.h"

static void* create(char*, size_t) { return nullptr; }
static const torsh_plugin_v1 kPlugin = {TORSH_PLUGIN_ABI_VERSION, "metal", "torsh-9.9.9/clang-99/libc++", create};
TORSH_PLUGIN_EXPORT const torsh_plugin_v1* torsh_backend_plugin_entry(void) { return &kPlugin; }
