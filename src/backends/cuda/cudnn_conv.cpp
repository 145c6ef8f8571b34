// conv2d through cuDNN's convolution API (cudnnConvolutionForward), loaded
// with dlopen so that cuDNN stays optional at run time. Numerics follow the
// CPU backend: f32 and f64 use plain FMA math (no TF32), f16 and bf16 store
// in 16 bits and accumulate in f32; the algorithm is a direct sum (implicit
// or explicit GEMM) or, unless the caller asked for Gemm, Winograd (the CPU's
// Auto takes Winograd where it pays too), never FFT; bias is
// added to the stored result, as the CPU adds it to its GEMM's output.
#include "cudnn_conv.hpp"

#if defined(TORSH_CUDNN) && !defined(TORSH_HIP)

#include <cudnn.h>

#include <climits>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cuda_error.hpp"
#include "dl_symbol.hpp"

namespace torsh::cuda {
namespace {

#define TORSH_CUDNN_STR2(x) #x
#define TORSH_CUDNN_STR(x) TORSH_CUDNN_STR2(x)

// The cuDNN entry points conv2d uses, from the library of the major version
// the plugin was compiled against.
struct CudnnApi {
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&cudnnSetTensor4dDescriptor) set_tensor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&cudnnSetFilter4dDescriptor) set_filter = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) create_conv = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_conv = nullptr;
  decltype(&cudnnSetConvolution2dDescriptor) set_conv = nullptr;
  decltype(&cudnnSetConvolutionGroupCount) set_groups = nullptr;
  decltype(&cudnnSetConvolutionMathType) set_math = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) algorithms = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;
  decltype(&cudnnAddTensor) add_tensor = nullptr;
  bool loaded = false;
};

const CudnnApi* cudnn() {
  static const CudnnApi api = [] {
    CudnnApi a;
    void* lib = dlopen("libcudnn.so." TORSH_CUDNN_STR(CUDNN_MAJOR), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return a;
    bool ok = true;
    const auto bind = [&](auto& fn, const char* name) { ok = bind_symbol(lib, fn, name) && ok; };
    bind(a.create, "cudnnCreate");
    bind(a.set_stream, "cudnnSetStream");
    bind(a.error_string, "cudnnGetErrorString");
    bind(a.create_tensor, "cudnnCreateTensorDescriptor");
    bind(a.destroy_tensor, "cudnnDestroyTensorDescriptor");
    bind(a.set_tensor, "cudnnSetTensor4dDescriptor");
    bind(a.create_filter, "cudnnCreateFilterDescriptor");
    bind(a.destroy_filter, "cudnnDestroyFilterDescriptor");
    bind(a.set_filter, "cudnnSetFilter4dDescriptor");
    bind(a.create_conv, "cudnnCreateConvolutionDescriptor");
    bind(a.destroy_conv, "cudnnDestroyConvolutionDescriptor");
    bind(a.set_conv, "cudnnSetConvolution2dDescriptor");
    bind(a.set_groups, "cudnnSetConvolutionGroupCount");
    bind(a.set_math, "cudnnSetConvolutionMathType");
    bind(a.algorithms, "cudnnGetConvolutionForwardAlgorithm_v7");
    bind(a.forward, "cudnnConvolutionForward");
    bind(a.add_tensor, "cudnnAddTensor");
    a.loaded = ok;
    return a;
  }();
  return api.loaded ? &api : nullptr;
}

[[noreturn]] void throw_cudnn(const CudnnApi& api, cudnnStatus_t st, const char* call, const CudaStream& s) {
  throw Error(ErrorCode::DeviceError, std::string(call) + " failed with " + api.error_string(st),
              {.op = "conv2d", .device = s.device().label()});
}

void check(const CudnnApi& api, cudnnStatus_t st, const char* call, const CudaStream& s) {
  if (st != CUDNN_STATUS_SUCCESS) throw_cudnn(api, st, call, s);
}

// One handle per device, made on first use and kept for the process. A handle
// is not safe to use from two threads at once: conv2d holds the lock throughout.
std::mutex g_handles_mutex;
std::unordered_map<int, cudnnHandle_t> g_handles;

// The algorithm chosen per geometry (device, dtype, shapes, parameters), so a
// repeated convolution skips the heuristic query. Bounded: a process that
// sees more geometries than this starts over.
struct Choice {
  cudnnConvolutionFwdAlgo_t algo;
  cudnnMathType_t math;
  std::size_t memory;
};
constexpr std::size_t kMaxChoices = 4096;
std::unordered_map<std::string, Choice> g_choices;

std::string geometry_key(int device, const rt::Conv2dArgs& a) {
  std::string k = std::to_string(device);
  const auto put = [&k](std::int64_t v) {
    k.push_back(',');
    k.append(std::to_string(v));
  };
  put(static_cast<int>(a.x.dtype));
  put(static_cast<int>(a.algo));
  for (const rt::TensorArg* t : {&a.x, &a.w, &a.out})
    for (std::size_t i = 0; i < t->shape.ndim(); ++i) put(t->shape[i]);
  for (std::int64_t v : {a.stride_h, a.stride_w, a.pad_h, a.pad_w, a.dil_h, a.dil_w, a.groups}) put(v);
  return k;
}

// Descriptors released however conv2d leaves.
struct Descriptors {
  const CudnnApi& api;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ~Descriptors() {
    if (x) api.destroy_tensor(x);
    if (y) api.destroy_tensor(y);
    if (bias) api.destroy_tensor(bias);
    if (w) api.destroy_filter(w);
    if (conv) api.destroy_conv(conv);
  }
};

struct Numerics {
  cudnnDataType_t storage, compute;
  cudnnMathType_t math;
};
Numerics numerics_of(DType t) {
  switch (t) {
    case DType::F64: return {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_FMA_MATH};
    case DType::F16: return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH};
    case DType::BF16: return {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH};
    default: return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH};
  }
}

bool allowed(cudnnConvolutionFwdAlgo_t algo, rt::ConvAlgo wanted) {
  switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return true;
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD:
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return wanted != rt::ConvAlgo::Gemm;  // as the CPU's Auto
    default: return false;  // FFT: several times the rounding error of a direct sum
  }
}

bool fits_int(const rt::TensorArg& t) {
  if (t.numel() > INT_MAX) return false;
  for (std::size_t i = 0; i < t.shape.ndim(); ++i)
    if (t.shape[i] > INT_MAX) return false;
  return true;
}

// A tensor's first element.
void* at(const rt::TensorArg& t) {
  return bytes_of(*t.buffer) + t.offset * static_cast<std::int64_t>(dtype_size(t.dtype));
}

}  // namespace

bool cudnn_conv2d(CudaStream& s, const rt::Conv2dArgs& a) {
  const CudnnApi* api = cudnn();
  if (api == nullptr) return false;
  if (!fits_int(a.x) || !fits_int(a.w) || !fits_int(a.out) || a.stride_h > INT_MAX || a.stride_w > INT_MAX ||
      a.pad_h > INT_MAX || a.pad_w > INT_MAX || a.dil_h > INT_MAX || a.dil_w > INT_MAX || a.groups > INT_MAX)
    return false;
  const auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
  const Numerics num = numerics_of(a.x.dtype);
  const std::string& device = s.device().label();

  std::lock_guard<std::mutex> lock(g_handles_mutex);
  cudnnHandle_t& handle = g_handles[s.device().ordinal()];
  if (handle == nullptr) check(*api, api->create(&handle), "cudnnCreate", s);
  check(*api, api->set_stream(handle, s.handle()), "cudnnSetStream", s);

  Descriptors d{*api};
  check(*api, api->create_tensor(&d.x), "cudnnCreateTensorDescriptor", s);
  check(*api, api->create_tensor(&d.y), "cudnnCreateTensorDescriptor", s);
  check(*api, api->create_filter(&d.w), "cudnnCreateFilterDescriptor", s);
  check(*api, api->create_conv(&d.conv), "cudnnCreateConvolutionDescriptor", s);
  const auto nchw = [&](cudnnTensorDescriptor_t t, const rt::TensorArg& v) {
    return api->set_tensor(t, CUDNN_TENSOR_NCHW, num.storage, i32(v.shape[0]), i32(v.shape[1]), i32(v.shape[2]),
                           i32(v.shape[3])) == CUDNN_STATUS_SUCCESS;
  };
  if (!nchw(d.x, a.x) || !nchw(d.y, a.out) ||
      api->set_filter(d.w, num.storage, CUDNN_TENSOR_NCHW, i32(a.w.shape[0]), i32(a.w.shape[1]), i32(a.w.shape[2]),
                      i32(a.w.shape[3])) != CUDNN_STATUS_SUCCESS ||
      api->set_conv(d.conv, i32(a.pad_h), i32(a.pad_w), i32(a.stride_h), i32(a.stride_w), i32(a.dil_h), i32(a.dil_w),
                    CUDNN_CROSS_CORRELATION, num.compute) != CUDNN_STATUS_SUCCESS ||
      api->set_groups(d.conv, i32(a.groups)) != CUDNN_STATUS_SUCCESS ||
      api->set_math(d.conv, num.math) != CUDNN_STATUS_SUCCESS)
    return false;  // a geometry or dtype this cuDNN does not describe

  // Scaling factors are double for double data, float otherwise.
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool f64 = a.x.dtype == DType::F64;
  const void* one = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  const auto run = [&](const Choice& c) {
    // f32 and f64 always with FMA math: TF32 tensor cores would round the inputs
    // to 10 bits. The heuristic reports DEFAULT math for most f32 algorithms,
    // which on Ampere and later would allow TF32, so its math type is not used.
    if (api->set_math(d.conv, num.math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : c.math) != CUDNN_STATUS_SUCCESS)
      return CUDNN_STATUS_NOT_SUPPORTED;
    void* workspace = nullptr;
    if (c.memory > 0) check_cuda(cudaMallocAsync(&workspace, c.memory, s.handle()), "cudaMallocAsync", device);
    const cudnnStatus_t st = api->forward(handle, one, d.x, at(a.x), d.w, at(a.w), d.conv, c.algo, workspace, c.memory,
                                          zero, d.y, at(a.out));
    if (workspace != nullptr) check_cuda(cudaFreeAsync(workspace, s.handle()), "cudaFreeAsync", device);
    return st;
  };
  const auto finish = [&] {
    if (!a.bias.present()) return;
    check(*api, api->create_tensor(&d.bias), "cudnnCreateTensorDescriptor", s);
    check(*api, api->set_tensor(d.bias, CUDNN_TENSOR_NCHW, num.storage, 1, i32(a.w.shape[0]), 1, 1),
          "cudnnSetTensor4dDescriptor", s);
    check(*api, api->add_tensor(handle, one, d.bias, at(a.bias), one, d.y, at(a.out)), "cudnnAddTensor", s);
  };

  // The algorithm that ran for this geometry before, without asking the heuristic again.
  const std::string key = geometry_key(s.device().ordinal(), a);
  if (const auto hit = g_choices.find(key); hit != g_choices.end()) {
    const cudnnStatus_t st = run(hit->second);
    if (st == CUDNN_STATUS_SUCCESS) {
      finish();
      return true;
    }
    g_choices.erase(hit);
    if (st != CUDNN_STATUS_NOT_SUPPORTED) check(*api, st, "cudnnConvolutionForward", s);
  }

  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  if (api->algorithms(handle, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf) !=
      CUDNN_STATUS_SUCCESS)
    return false;
  // The heuristic's order, best first; the first allowed algorithm that runs wins.
  for (int i = 0; i < found; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS || !allowed(p.algo, a.algo)) continue;
    const Choice c{p.algo, p.mathType, p.memory};
    const cudnnStatus_t st = run(c);
    if (st == CUDNN_STATUS_NOT_SUPPORTED) continue;
    check(*api, st, "cudnnConvolutionForward", s);
    if (g_choices.size() >= kMaxChoices) g_choices.clear();
    g_choices.emplace(key, c);
    finish();
    return true;
  }
  return false;
}

}  // namespace torsh::cuda

#else

namespace torsh::cuda {
bool cudnn_conv2d(CudaStream&, const rt::Conv2dArgs&) { return false; }
}  // namespace torsh::cuda

#endif
