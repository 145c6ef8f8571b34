// The SpMV row loop of spmv_gather.cpp, included once in each x86 level's
// target region (after that level's Lanes), so that its policy's intrinsics
// inline into it. No include guard: it is meant to be included twice.
//
// Whole vectors of Lanes::W nonzeros, then Lanes::finish with the rest
// (fewer than W) and the row's sum. The values and indices streams are
// prefetched `ahead` nonzeros ahead across row ends, as the scalar loop does.
template <class I, class T>
void rows(const I* indptr, const I* indices, const T* values, const T* x, T* y, std::int64_t r0, std::int64_t r1,
          std::int64_t ahead) {
  using K = Lanes<I, T>;
  const std::int64_t last = ahead > 0 ? static_cast<std::int64_t>(indptr[r1]) : 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::int64_t j = indptr[r];
    const std::int64_t e = indptr[r + 1];
    typename K::Acc acc{};
    for (; j + K::W <= e; j += K::W) {
      if (j + ahead < last) {
        __builtin_prefetch(&values[j + ahead]);
        __builtin_prefetch(&indices[j + ahead]);
      }
      acc = K::step(acc, indices + j, values + j, x);
    }
    y[r] = K::finish(acc, indices + j, values + j, x, static_cast<int>(e - j));
  }
}
