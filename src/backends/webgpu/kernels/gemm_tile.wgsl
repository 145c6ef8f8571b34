// Shared part (`//! use gemm_tile`): the register-blocked tile of matmul and
// conv. A work-group of 16 x 16 invocations owns a 64 x 64 block of the
// output, each invocation a 4 x 4 block (rows lid.y + 16 i, columns
// lid.x + 16 j); the kernel stages KT steps of the reduction in ta (row r of
// step k at k * MT + r) and tb (column c at k * MT + c), then calls
// tile_accumulate between barriers.
const MT: u32 = 64u;
const KT: u32 = 16u;
var<workgroup> ta: array<f32, 1024>;
var<workgroup> tb: array<f32, 1024>;

fn tile_accumulate(acc: ptr<function, array<f32, 16>>, lid: vec3<u32>) {
  for (var kk = 0u; kk < KT; kk = kk + 1u) {
    var ar: array<f32, 4>;
    var br: array<f32, 4>;
    for (var i = 0u; i < 4u; i = i + 1u) {
      ar[i] = ta[kk * MT + lid.y + 16u * i];
      br[i] = tb[kk * MT + lid.x + 16u * i];
    }
    for (var i = 0u; i < 4u; i = i + 1u) {
      for (var j = 0u; j < 4u; j = j + 1u) { (*acc)[i * 4u + j] = (*acc)[i * 4u + j] + ar[i] * br[j]; }
    }
  }
}
