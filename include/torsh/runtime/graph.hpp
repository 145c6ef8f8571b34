#pragma once
// Graph capture and replay. Ops issued on a backend between GraphCapture's
// construction and end() run as usual and are also recorded, with their
// operands' memory. Graph::replay() re-issues the recorded kernels straight to
// the device: no validation, dispatch or allocation per op. To run on new
// data, write it into the tensors the captured ops read (as with CUDA graphs)
// and replay; results appear in the tensors the capture produced.
//
// What is recorded: every op of the op layer. Host reads and writes (to_vector,
// copy_from_host) are not recorded; do them outside replay.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "torsh/runtime/backend.hpp"

namespace torsh {

namespace detail {
struct GraphState;
}

class Graph {
 public:
  Graph() = default;
  // Runs the recorded ops in order, then waits for the device.
  void replay();
  // Recorded ops, in issue order ("add", "matmul", ...).
  std::size_t size() const;
  std::vector<std::string> op_names() const;
  // Bytes of device memory the graph keeps alive for its operands.
  std::size_t planned_bytes() const;
  // How the backend replays: "kernel list" (host re-issues recorded kernels)
  // or a backend's native form such as "cl_khr_command_buffer" (the device
  // commands recorded once, replayed with one enqueue).
  std::string replay_mode() const;
  // Why replay_mode() is "kernel list": the backend has no native form, or an
  // op could not be recorded in it (a CPU fallback, a host transfer, ...).
  // Empty when the native form is used.
  std::string native_unavailable_reason() const;

 private:
  friend class GraphCapture;
  std::shared_ptr<detail::GraphState> s_;
};

class GraphCapture {
 public:
  // Native: replay in the backend's native form where it has one (see
  // Graph::replay_mode); KernelList: always re-issue the recorded kernels
  // (to compare the two, or to work around a driver's command buffers).
  enum class Replay { Native, KernelList };
  // Records ops issued from this thread whose outputs live on `backend`.
  explicit GraphCapture(const Backend& backend, Replay replay = Replay::Native);
  ~GraphCapture();  // abandons the capture if end() was not called
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;
  Graph end();

 private:
  std::shared_ptr<detail::GraphState> s_;
  bool ended_ = false;
};

}  // namespace torsh
