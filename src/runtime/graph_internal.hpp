#pragma once
// Internal: what the op layer records into an active capture.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "torsh/runtime/graph.hpp"

namespace torsh::detail {

struct GraphNode {
  std::string name;
  std::function<void()> run;   // issues the kernel with its recorded operands
  std::vector<Buffer> keep;    // the operands' memory, alive as long as the graph
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
    if (native) native->invalidate(reason);
    else if (no_native.empty()) no_native = reason;
  }
};

// The capture recording on this thread for ops on `dev`, or null.
GraphState* capturing(const rt::DeviceImpl& dev);
// Any capture open on this thread (ops on other devices during it are refused).
GraphState* capturing_any();

}  // namespace torsh::detail
