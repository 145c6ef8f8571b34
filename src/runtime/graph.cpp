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
  if (!s)
    throw Error(ErrorCode::InvalidState, "empty graph handle", {.op = "graph"},
                {"Obtain a Graph from GraphCapture::end()"});
  return *s;
}
}  // namespace

GraphCapture::GraphCapture(const Backend& backend, Replay replay) : s_(std::make_shared<detail::GraphState>()) {
  if (detail::t_capture)
    throw Error(ErrorCode::InvalidState, "a graph capture is already open on this thread",
                {.op = "graph.capture", .device = backend.device().to_string()},
                {"End the open capture first; captures do not nest"});
  s_->device = &backend.impl();
  s_->backend = backend;
  // Ops run on the device's default stream (ops/dispatch.cpp), so that is the one recorded.
  if (replay == Replay::KernelList) {
    s_->no_native = "the capture asked for kernel-list replay";
  } else {
    try {
      s_->native = s_->device->begin_native_capture(s_->device->default_stream());
    } catch (const std::exception& e) {
      s_->no_native = std::string("starting a native recording failed: ") + e.what();
    }
  }
  if (!s_->native && s_->no_native.empty())
    s_->no_native = "the " + std::string(backend_key(backend.type())) + " backend replays graphs as a kernel list";
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
  if (s_->native) {
    try {
      s_->native->finalize();
    } catch (const std::exception& e) {
      s_->native->invalidate(std::string("finalizing failed: ") + e.what());
    }
  }
  Graph g;
  g.s_ = s_;
  return g;
}

void Graph::replay() {
  auto& s = state_of(s_);
  if (detail::t_capture)
    throw Error(ErrorCode::InvalidState, "replay inside an open capture", {.op = "graph.replay"},
                {"End the capture before replaying"});
  if (s.native && s.native->ok()) {
    rt::StreamImpl& stream = s.device->default_stream();
    s.native->replay(stream);
    stream.synchronize();
    return;
  }
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
  const auto& s = state_of(s_);
  return s.native && s.native->ok() ? s.native->mode() : "kernel list";
}

std::string Graph::native_unavailable_reason() const {
  const auto& s = state_of(s_);
  if (!s.native) return s.no_native;
  return s.native->ok() ? std::string() : s.native->reason();
}

}  // namespace torsh
