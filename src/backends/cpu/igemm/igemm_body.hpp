// The tile of igemm.hpp, written once over a vector type. Included by each
// instruction set's file inside its target pragma, with V providing:
//   vec; kLanes (32-bit lanes per vector); zero(); load(p); bcast(p) (one
//   32-bit word to every lane); dot(acc, a, b) (acc + the lane-wise dot
//   product of the k values in a and b); store(p, v).
// Two vectors of b columns (nr = 2 kLanes) by MR rows of accumulators, which
// stay in registers over the whole k (panels stream from L2).

template <class V, int MR>
void tile_body(const unsigned char* a, const unsigned char* b, std::int64_t groups, std::int32_t* c) {
  constexpr int NR = 2 * V::kLanes;
  typename V::vec acc[MR][2];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = V::zero();
  for (std::int64_t g = 0; g < groups; ++g) {
    const typename V::vec b0 = V::load(b), b1 = V::load(b + 4 * V::kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const typename V::vec av = V::bcast(a + 4 * r);
      acc[r][0] = V::dot(acc[r][0], av, b0);
      acc[r][1] = V::dot(acc[r][1], av, b1);
    }
    a += 4 * MR;
    b += 4 * NR;
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    V::store(c + r * NR, acc[r][0]);
    V::store(c + r * NR + V::kLanes, acc[r][1]);
  }
}
