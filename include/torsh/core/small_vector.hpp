#pragma once
// Dims and strides live inline (no heap): every op builds several shapes, and
// allocating them dominated the cost of ops on small tensors.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace torsh {

inline constexpr std::size_t kMaxRank = 8;

// Throws torsh::Error (InvalidArgument) naming the limit and the rank asked for;
// out of line so the inline checks stay small.
[[noreturn]] void throw_rank_exceeded(std::size_t rank);

class DimVec {
 public:
  using value_type = std::int64_t;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;

  DimVec() {}  // v_ left unset: only the first n_ values are ever read
  // Fills all kMaxRank slots: a fill of n_ became a byte-by-byte loop (a
  // memset of unknown size), 80 instructions for two dimensions.
  explicit DimVec(std::size_t n, std::int64_t value = 0) : n_(checked(n)) { std::fill(v_, v_ + kMaxRank, value); }
  DimVec(std::initializer_list<std::int64_t> init) : n_(checked(init.size())) {
    std::copy(init.begin(), init.end(), v_);
  }
  template <class It>
  DimVec(It first, It last) : n_(checked(static_cast<std::size_t>(std::distance(first, last)))) {
    std::copy(first, last, v_);
  }
  DimVec(const std::vector<std::int64_t>& v) : DimVec(v.begin(), v.end()) {}  // NOLINT: implicit by design
  operator std::vector<std::int64_t>() const { return {begin(), end()}; }     // NOLINT

  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  std::int64_t& operator[](std::size_t i) { return v_[i]; }
  std::int64_t operator[](std::size_t i) const { return v_[i]; }
  std::int64_t* data() { return v_; }
  const std::int64_t* data() const { return v_; }
  iterator begin() { return v_; }
  iterator end() { return v_ + n_; }
  const_iterator begin() const { return v_; }
  const_iterator end() const { return v_ + n_; }
  std::int64_t back() const { return v_[n_ - 1]; }
  void push_back(std::int64_t x) {
    checked(n_ + 1);
    v_[n_++] = x;
  }
  iterator insert(const_iterator pos, std::int64_t x) {
    checked(n_ + 1);
    const auto i = static_cast<std::size_t>(pos - v_);
    std::copy_backward(v_ + i, v_ + n_, v_ + n_ + 1);
    v_[i] = x;
    ++n_;
    return v_ + i;
  }
  // A plain loop: std::equal becomes a call to memcmp, which costs more than
  // comparing at most 8 values (shapes are compared on every op).
  bool operator==(const DimVec& o) const {
    if (n_ != o.n_) return false;
    for (std::size_t i = 0; i < n_; ++i)
      if (v_[i] != o.v_[i]) return false;
    return true;
  }
  bool operator!=(const DimVec& o) const { return !(*this == o); }

 private:
  static std::size_t checked(std::size_t n) {
    if (n > kMaxRank) throw_rank_exceeded(n);
    return n;
  }
  // Not zeroed: every op builds several shapes and clearing all kMaxRank
  // values cost more than the dims themselves; copies move all of them.
  std::int64_t v_[kMaxRank];
  std::size_t n_ = 0;
};

}  // namespace torsh
