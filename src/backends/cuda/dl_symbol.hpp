#pragma once
// Functions of a library opened with dlopen: the driver API, NVRTC / hiprtc,
// cuFFT and cuDNN stay optional at run time, so the plugin loads without
// them and reports what is missing.
#include <dlfcn.h>

#include <string>

namespace torsh::cuda {

// Points fn at `name` in lib and returns whether it was found; when not
// found and `missing` is given, appends the name to it, comma-separated.
template <class F>
bool bind_symbol(void* lib, F& fn, const char* name, std::string* missing = nullptr) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (fn == nullptr && missing != nullptr) *missing += std::string(missing->empty() ? "" : ", ") + name;
  return fn != nullptr;
}

}  // namespace torsh::cuda
