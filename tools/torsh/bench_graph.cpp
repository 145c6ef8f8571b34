// Graph replay against eager execution: a 100-op chain on small tensors,
// where per-op dispatch and allocation, not arithmetic, set the time. The
// replay line names the mode that ran; where the backend has a native form
// (cl_khr_command_buffer on OpenCL), the kernel-list replay of the same chain
// is measured beside it.
#include <chrono>

#include "bench_common.hpp"

namespace torsh::cli {

void bench_graph(Ctx& c) {
  const std::string eager_name = "graph_eager_100ops_f32_64", replay_name = "graph_replay_100ops_f32_64",
                    list_name = "graph_replay_kernel_list_100ops_f32_64";
  if (!wanted(c, eager_name) && !wanted(c, replay_name) && !wanted(c, list_name)) return;
  Backend& d = c.dev;
  Tensor x = ops::randn(d, Shape{64}, 1), w = ops::randn(d, Shape{64}, 2);
  const auto chain = [&] {
    Tensor y = x;
    for (int i = 0; i < 50; ++i) y = ops::mul(ops::add(y, w), w);
    return y;
  };
  const auto capture = [&](GraphCapture::Replay mode) {
    GraphCapture cap(d, mode);
    chain();
    return cap.end();
  };
  const int ops_per_chain = 100;
  const double eager = median_ms(
      d, [&] { chain(); }, 2000, c.min_seconds);
  Graph g = capture(GraphCapture::Replay::Native);
  const double replay = median_ms(
      d, [&] { g.replay(); }, 2000, c.min_seconds);
  if (wanted(c, eager_name)) emit(c, eager_name, "f32", eager, "us_per_op", eager * 1e3 / ops_per_chain);
  if (wanted(c, replay_name))
    emit(c, replay_name, "f32", replay, "us_per_op", replay * 1e3 / ops_per_chain, "mode: " + g.replay_mode());
  if (g.replay_mode() != "kernel list" && wanted(c, list_name)) {
    Graph list = capture(GraphCapture::Replay::KernelList);
    const double ms = median_ms(
        d, [&] { list.replay(); }, 2000, c.min_seconds);
    emit(c, list_name, "f32", ms, "us_per_op", ms * 1e3 / ops_per_chain, "mode: " + list.replay_mode());
  }
}

}  // namespace torsh::cli
