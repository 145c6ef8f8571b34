// The tile of igemm.hpp, written once over a vector type. Included by each
// instruction set's file inside its target pragma, with V providing:
//   vec; kLanes (32-bit lanes per vector); zero(); load(p); bcast(p) (one
//   32-bit word to every lane); dot(acc, a, b) (acc + the lane-wise dot
//   product of the k values in a and b); add(x, y); store(p, v).
// NV vectors of b columns (nr = NV kLanes) by MR rows of accumulators, which
// stay in registers over the whole k (panels stream from L2).

template <class V, int MR, int NV>
void tile_body(const unsigned char* a, const unsigned char* b, std::int64_t groups, const TileOut& out) {
  constexpr int NR = NV * V::kLanes;
  typename V::vec acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = V::zero();
  for (std::int64_t g = 0; g < groups; ++g) {
    typename V::vec bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = V::load(b + 4 * v * V::kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const typename V::vec av = V::bcast(a + 4 * r);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = V::dot(acc[r][v], av, bv[v]);
    }
    a += 4 * MR;
    b += 4 * NR;
  }
  std::int32_t* const c = out.c;
  if (out.acc)
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = V::add(acc[r][v], V::load(out.acc + r * out.ld_acc + v * V::kLanes));
  if (out.col) {
    typename V::vec col[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) col[v] = V::load(out.col + v * V::kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const typename V::vec row = V::bcast(out.row + r);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) V::store(c + r * out.ldc + v * V::kLanes, V::add(acc[r][v], V::add(col[v], row)));
    }
    return;
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) V::store(c + r * out.ldc + v * V::kLanes, acc[r][v]);
}
