#include "torsh/runtime/graph.hpp"

#include <unordered_set>

#include "graph_internal.hpp"
#include "registry_internal.hpp"

namespace torsh {
namespace detail {
namespace {
thread_local GraphState* t_capture = nullptr;
}

GraphState* capturing(const rt::DeviceImpl& dev) {
  return t_capture && t_capture->device == &dev ? t_capture : nullptr;
}
GraphState* capturing_any() { return t_capture; }

}  // namespace detail

namespace {
detail::GraphState& state_of(const std::shared_ptr<detail::GraphState>& s) {
  if (!s) throw Error(ErrorCode::InvalidState, "empty graph handle", {.op = "graph"}, {"Obtain a Graph from GraphCapture::end()"});
  return *s;
}
}  // namespace

GraphCapture::GraphCapture(const Backend& backend) : s_(std::make_shared<detail::GraphState>()) {
  if (detail::t_capture)
    throw Error(ErrorCode::InvalidState, "a graph capture is already open on this thread",
                {.op = "graph.capture", .device = backend.device().to_string()},
                {"End the open capture first; captures do not nest"});
  s_->device = &backend.impl();
  s_->backend = backend;
  detail::t_capture = s_.get();
}

GraphCapture::~GraphCapture() {
  if (!ended_ && detail::t_capture == s_.get()) detail::t_capture = nullptr;
}

Graph GraphCapture::end() {
  if (ended_) throw Error(ErrorCode::InvalidState, "GraphCapture::end() called twice", {.op = "graph.capture"});
  ended_ = true;
  if (detail::t_capture == s_.get()) detail::t_capture = nullptr;
  s_->open = false;
  Graph g;
  g.s_ = s_;
  return g;
}

void Graph::replay() {
  auto& s = state_of(s_);
  if (detail::t_capture)
    throw Error(ErrorCode::InvalidState, "replay inside an open capture", {.op = "graph.replay"},
                {"End the capture before replaying"});
  for (auto& n : s.nodes) n.run();
  s.device->synchronize();
}

std::size_t Graph::size() const { return state_of(s_).nodes.size(); }

std::vector<std::string> Graph::op_names() const {
  std::vector<std::string> names;
  for (const auto& n : state_of(s_).nodes) names.push_back(n.name);
  return names;
}

std::size_t Graph::planned_bytes() const {
  std::unordered_set<const void*> seen;
  std::size_t total = 0;
  for (const auto& n : state_of(s_).nodes)
    for (const auto& b : n.keep)
      if (b.valid() && seen.insert(&b.impl()).second) total += b.size();
  return total;
}

std::string Graph::replay_mode() const {
  state_of(s_);
  return "kernel list";
}

}  // namespace torsh
