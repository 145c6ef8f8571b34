#pragma once
// Internal: what the op layer records into an active capture.
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "torsh/backend/backend_impl.hpp"
#include "torsh/runtime/graph.hpp"

namespace torsh::detail {

struct GraphNode {
  std::string name;
  std::function<void()> run;  // issues the kernel with its recorded operands
  std::vector<Buffer> keep;   // the operands' memory, alive as long as the graph
};

struct GraphState {
  rt::DeviceImpl* device = nullptr;
  Backend backend;
  std::vector<GraphNode> nodes;
  // The backend's recording of the same ops, when it has one. Declared after
  // `nodes` so that it is released first: it may reference their memory.
  std::unique_ptr<rt::NativeGraph> native;
  std::string no_native;  // why `native` is absent or unusable
  bool open = true;

  // Native replay is off for this graph, for `reason` (the first one stays).
  void invalidate_native(const std::string& reason) {
    if (native)
      native->invalidate(reason);
    else if (no_native.empty())
      no_native = reason;
  }
};

// Arms the capture's native recording while one op runs (see rt::NativeGraph).
class NativeRecording {
 public:
  explicit NativeRecording(GraphState* g) : n_(g && g->native ? g->native.get() : nullptr) {
    if (n_) n_->arm(true);
  }
  ~NativeRecording() {
    if (!n_) return;
    n_->arm(false);
    // An op that threw may have recorded part of its commands.
    if (std::uncaught_exceptions() > unwinding_) n_->invalidate("an op failed while it was being recorded");
  }
  NativeRecording(const NativeRecording&) = delete;
  NativeRecording& operator=(const NativeRecording&) = delete;

 private:
  rt::NativeGraph* n_;
  int unwinding_ = n_ ? std::uncaught_exceptions() : 0;
};

// The capture recording on this thread for ops on `dev`, or null.
GraphState* capturing(const rt::DeviceImpl& dev);
// Any capture open on this thread (ops on other devices during it are refused).
GraphState* capturing_any();

}  // namespace torsh::detail
