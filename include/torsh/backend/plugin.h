/* The versioned C entry point every backend plugin exports.
 *
 * The host dlopen()s libtorsh_backend_<key>.so, looks up
 * torsh_backend_plugin_entry, checks abi_version and build_id, then calls
 * create_driver. The returned pointer is a torsh::rt::Driver* created with the
 * same C++ runtime as the host (build_id guards that). Any failure is reported
 * as the backend's "unavailable" reason; the host never crashes on it. */
#ifndef TORSH_RUNTIME_PLUGIN_H
#define TORSH_RUNTIME_PLUGIN_H
#include <stddef.h>
#include <stdint.h>

#define TORSH_PLUGIN_ABI_VERSION 1u
#define TORSH_PLUGIN_ENTRY_SYMBOL "torsh_backend_plugin_entry"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct torsh_plugin_v1 {
  uint32_t abi_version;    /* TORSH_PLUGIN_ABI_VERSION the plugin was built with */
  const char* backend_key; /* "opencl", "cuda", ... */
  const char* build_id;    /* torsh_build_id() of the headers it was built with */
  /* Returns a new torsh::rt::Driver*, or NULL with a reason written to err.
   * On success err may hold a note for the user (how the driver worked around
   * its environment); it is shown with the backend's status. */
  void* (*create_driver)(char* err, size_t err_len);
} torsh_plugin_v1;

typedef const torsh_plugin_v1* (*torsh_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#define TORSH_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

#endif
