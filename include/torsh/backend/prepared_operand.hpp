#pragma once
// An operand prepared once for many calls (ops::IntegerWeight). A backend
// kernel with a faster form of a constant operand (the CPU's packed int8
// panels) builds that form on first use and keeps it here, under a key of
// its own, for every later call. The operand's values never change after
// preparation (the op layer holds a private copy), so a form, once built,
// stays valid for the life of the operand.
#include <map>
#include <memory>
#include <mutex>

namespace torsh::rt {

class PreparedOperand {
 public:
  // The form under `key`, made by `make()` (a std::shared_ptr<T>) on the first
  // call; concurrent callers wait for it and share it.
  template <class T, class Make>
  std::shared_ptr<const T> form(const void* key, Make&& make) {
    std::lock_guard lock(mutex_);
    auto it = forms_.find(key);
    if (it == forms_.end()) it = forms_.emplace(key, std::shared_ptr<const void>(make())).first;
    return std::static_pointer_cast<const T>(it->second);
  }

 private:
  std::mutex mutex_;
  std::map<const void*, std::shared_ptr<const void>> forms_;
};

}  // namespace torsh::rt
