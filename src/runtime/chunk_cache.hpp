#pragma once
// Storage for the buffer state every allocation makes (one chunk of one size:
// the state and its shared_ptr control block). Freed chunks wait on a short
// list of the freeing thread and are handed out again in a few instructions;
// malloc and free took a hundred, a fifth of an empty tensor's cost.
#include <cstddef>
#include <new>

namespace torsh::detail {

template <std::size_t Size>
class ChunkCache {
 public:
  static void* get() {
    if (Cache* c = cache(); c && c->head) {
      Node* n = c->head;
      c->head = n->next;
      --c->count;
      return n;
    }
    return ::operator new(Size);
  }
  static void put(void* p) noexcept {
    if (Cache* c = cache(); c && c->count < kKeep) {
      auto* n = static_cast<Node*>(p);
      n->next = c->head;
      c->head = n;
      ++c->count;
      return;
    }
    ::operator delete(p);
  }

 private:
  struct Node {
    Node* next;
  };
  static constexpr int kKeep = 64;  // per thread: at most 64 chunks of a few hundred bytes
  struct Cache {
    Node* head = nullptr;
    int count = 0;
    ~Cache() {
      dead_ = true;
      while (head) {
        Node* n = head;
        head = n->next;
        ::operator delete(n);
      }
    }
  };
  // Null once the thread's cache is destroyed: a state freed later in the
  // thread's exit goes straight back to the heap. dead_ has no destructor,
  // so it can still be read then.
  static inline thread_local bool dead_ = false;
  static Cache* cache() noexcept {
    if (dead_) return nullptr;
    thread_local Cache c;
    return &c;
  }
};

// An allocator for std::allocate_shared whose single-object allocations come
// from ChunkCache.
template <class T>
struct CachedAllocator {
  using value_type = T;
  CachedAllocator() = default;
  template <class U>
  CachedAllocator(const CachedAllocator<U>&) noexcept {}  // NOLINT: rebinding
  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    return static_cast<T*>(n == 1 ? ChunkCache<sizeof(T)>::get() : ::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n == 1)
      ChunkCache<sizeof(T)>::put(p);
    else
      ::operator delete(p);
  }
  template <class U>
  bool operator==(const CachedAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace torsh::detail
