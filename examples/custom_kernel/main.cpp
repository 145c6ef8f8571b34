// One user kernel on every backend present: bias_gelu_dropout.torsh (the
// Torsh dialect) where the device builds it, bias_gelu_dropout.wgsl on
// WebGPU, each checked against the same computation made of built-in ops.
// Exits non-zero when a device gives a wrong answer.
//
//   custom_kernel [folder with the kernel files]
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs the kernel on `d` and returns max |kernel - built-in ops|.
double run_on(Backend& d, const std::string& dir) {
  const auto caps = d.capabilities();
  const bool torsh_dialect = caps.accepts(KernelDialect::Torsh);
  KernelSource src{.source = read_file(dir + (torsh_dialect ? "/bias_gelu_dropout.torsh" : "/bias_gelu_dropout.wgsl")),
                   .entry = "bias_gelu_dropout",
                   .dialect = torsh_dialect ? KernelDialect::Torsh : KernelDialect::Wgsl};
  const std::int64_t rows = 333, cols = 769;  // odd sizes: no multiple of any block
  const float p_drop = 0.1f, scale = 1.0f / (1.0f - p_drop);
  Tensor x = ops::randn(d, Shape{rows, cols}, 1), bias = ops::randn(d, Shape{cols}, 2);
  Tensor keep = ops::bernoulli(d, Shape{rows, cols}, 1.0f - p_drop, 3);
  Tensor y = d.empty(Shape{rows, cols}, DType::F32);

  Kernel k = d.compile_kernel(src);
  std::printf("  %-10s %-6s kernel built in %8.2f ms (%s)\n", d.device().to_string().c_str(),
              std::string(kernel_dialect_name(src.dialect)).c_str(), k.build_ms(),
              std::string(kernel_origin_name(k.origin())).c_str());
  const std::uint32_t block = 256, groups = 120;
  // rows and cols convert to the parameters' types (long, or u32 in WGSL); a value that does not fit is refused.
  d.default_stream().launch(k, Dim3{groups}, Dim3{block}, y, x, bias, keep, rows, cols, scale);

  Tensor ref = ops::mul(ops::mul(ops::gelu(ops::add(x, bias), /*tanh_approximation=*/true), keep),
                        d.from_host(&scale, Shape{1}, DType::F32));
  const auto a = y.to_vector(), b = ref.to_vector();
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : TORSH_EXAMPLE_DIR;
  int failures = 0, ran = 0;
  std::printf("bias + GELU + dropout as a user kernel, against built-in ops:\n");
  for (BackendType t : Backend::available()) {
    Backend d = Backend::create(t);
    if (d.capabilities().kernel_dialects.empty()) {
      std::printf("  %-10s builds no user kernels\n", d.device().to_string().c_str());
      continue;
    }
    try {
      const double diff = run_on(d, dir);
      const bool ok = diff <= 1e-5;  // f32 kernels; tanh differs by a few ulp between device libraries
      std::printf("  %-10s max |diff| %.3g  %s\n", d.device().to_string().c_str(), diff, ok ? "OK" : "WRONG");
      failures += !ok;
      ++ran;
    } catch (const Error& e) {
      std::printf("  %-10s failed: %s\n", d.device().to_string().c_str(), e.what());
      ++failures;
    }
  }
  std::printf("%d device(s) ran the kernel, %d failed\n", ran, failures);
  return failures ? 1 : 0;
}
