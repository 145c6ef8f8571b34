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
  bool open = true;
};

// The capture recording on this thread for ops on `dev`, or null.
GraphState* capturing(const rt::DeviceImpl& dev);
// Any capture open on this thread (ops on other devices during it are refused).
GraphState* capturing_any();

}  // namespace torsh::detail
