// cuBLASLt int8 products. One cuBLASLt handle per device, created on first
// use and kept for the process (it holds no stream). The algorithm for a
// geometry comes from cuBLASLt's heuristic once and is cached, refusals
// included, so repeated shapes pay only the descriptors. The heuristic is
// told each pointer's real alignment, so it never picks a kernel that needs
// more than the operands have.
#include "cublas_int8.hpp"

#include <cublasLt.h>

#include <climits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "cuda_error.hpp"

namespace torsh::cuda {
namespace {

void check(cublasStatus_t r, const char* call, const CudaStream& s) {
  if (r != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorCode::DeviceError, std::string(call) + " failed with cublasStatus " + std::to_string(r),
                {.op = "matmul_integer", .device = s.device().label()});
}

std::mutex g_mutex;

cublasLtHandle_t handle_for(const CudaStream& s) {
  static std::map<int, cublasLtHandle_t> handles;  // guarded by g_mutex
  const int dev = s.device().ordinal();
  if (auto it = handles.find(dev); it != handles.end()) return it->second;
  cublasLtHandle_t h = nullptr;
  check(cublasLtCreate(&h), "cublasLtCreate", s);
  handles.emplace(dev, h);
  return h;
}

// Descriptors with their destroy calls, so an exception leaks none.
struct Desc {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Desc() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

std::uint32_t alignment(const void* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t al = 256;
  while (al > 1 && v % al != 0) al /= 2;
  return al;
}

void layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, std::int64_t rows, std::int64_t cols, std::int64_t ld,
            std::int64_t batch, std::int64_t stride, const CudaStream& s) {
  check(cublasLtMatrixLayoutCreate(l, t, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld),
        "cublasLtMatrixLayoutCreate", s);
  if (batch > 1) {
    const auto count = static_cast<std::int32_t>(batch);
    check(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
          "cublasLtMatrixLayoutSetAttribute", s);
    check(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
          "cublasLtMatrixLayoutSetAttribute", s);
  }
}

// Workspace cuBLASLt may use for a split-k or similar algorithm.
constexpr std::uint64_t kMaxWorkspace = std::uint64_t{32} << 20;

using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                       std::int64_t, int, std::uint32_t, std::uint32_t, std::uint32_t, std::int64_t, std::int64_t>;
constexpr std::size_t kMaxAlgos = 64;
std::map<Key, std::optional<cublasLtMatmulHeuristicResult_t>> g_algos;  // guarded by g_mutex

}  // namespace

bool cublas_int8_gemm(CudaStream& s, const Int8Gemm& g) {
  if (g.rows > INT_MAX || g.cols > INT_MAX || g.k > INT_MAX || g.batch > INT_MAX) return false;
  Desc d;
  check(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32I, CUDA_R_32I), "cublasLtMatmulDescCreate", s);
  const cublasOperation_t ta = g.a.t ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.b.t ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
        "cublasLtMatmulDescSetAttribute", s);
  check(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
        "cublasLtMatmulDescSetAttribute", s);
  // The stored matrices: op(a) is rows x k, op(b) is k x cols.
  layout(&d.a, CUDA_R_8I, g.a.t ? g.k : g.rows, g.a.t ? g.rows : g.k, g.a.ld, g.batch, g.a.batch_stride, s);
  layout(&d.b, CUDA_R_8I, g.b.t ? g.cols : g.k, g.b.t ? g.k : g.cols, g.b.ld, g.batch, g.b.batch_stride, s);
  layout(&d.c, CUDA_R_32I, g.rows, g.cols, g.ldc, g.batch, g.c_batch_stride, s);

  const std::uint32_t al_a = alignment(g.a.p), al_b = alignment(g.b.p), al_c = alignment(g.c);
  const Key key{s.device().ordinal(),        g.rows, g.cols, g.k,  g.batch,          g.a.ld,          g.b.ld, g.ldc,
                int{g.a.t} * 2 + int{g.b.t}, al_a,   al_b,   al_c, g.a.batch_stride, g.b.batch_stride};
  std::optional<cublasLtMatmulHeuristicResult_t> algo;
  cublasLtHandle_t h = nullptr;
  {
    std::lock_guard lock(g_mutex);
    h = handle_for(s);
    if (auto it = g_algos.find(key); it != g_algos.end()) {
      algo = it->second;
    } else {
      check(cublasLtMatmulPreferenceCreate(&d.pref), "cublasLtMatmulPreferenceCreate", s);
      const auto set_pref = [&](cublasLtMatmulPreferenceAttributes_t attr, const auto& v) {
        check(cublasLtMatmulPreferenceSetAttribute(d.pref, attr, &v, sizeof v), "cublasLtMatmulPreferenceSetAttribute",
              s);
      };
      set_pref(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, kMaxWorkspace);
      set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, al_a);
      set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, al_b);
      set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, al_c);
      set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, al_c);
      cublasLtMatmulHeuristicResult_t r{};
      int found = 0;
      const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(h, d.op, d.a, d.b, d.c, d.c, d.pref, 1, &r, &found);
      if (st == CUBLAS_STATUS_SUCCESS && found > 0 && r.state == CUBLAS_STATUS_SUCCESS)
        algo = r;
      else if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED)
        check(st, "cublasLtMatmulAlgoGetHeuristic", s);
      if (g_algos.size() >= kMaxAlgos) g_algos.clear();
      g_algos.emplace(key, algo);
    }
  }
  if (!algo) return false;
  void* workspace = nullptr;
  if (algo->workspaceSize > 0)
    check_cuda(cudaMallocAsync(&workspace, algo->workspaceSize, s.handle()), "cudaMallocAsync (cuBLASLt workspace)",
               s.device().label());
  const std::int32_t one = 1, zero = 0;
  const cublasStatus_t st = cublasLtMatmul(h, d.op, &one, g.a.p, d.a, g.b.p, d.b, &zero, g.c, d.c, g.c, d.c,
                                           &algo->algo, workspace, algo->workspaceSize, s.handle());
  if (workspace != nullptr) (void)cudaFreeAsync(workspace, s.handle());
  check(st, "cublasLtMatmul", s);
  return true;
}

}  // namespace torsh::cuda
