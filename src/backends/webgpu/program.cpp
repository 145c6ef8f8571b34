// WGSL modules and the one way a kernel is launched. A kernel file
// (kernels/<name>.wgsl) starts with a line naming its tensor bindings:
//
//   //! bind a:in b:in out:out
//
// and the module compiled is: those bindings (inputs array<u32>, outputs
// array<atomic<u32>>, since elements narrower than a word are written by
// several invocations into one word; all read_write, because tensors of one
// pool segment share a buffer and WebGPU refuses a buffer bound read-only and
// writable in one dispatch, while it takes several writable bindings), the params buffer P, prelude.wgsl
// (dtype codes, f16/bf16 bits, strided indexing), the accessors of each
// binding (access_in.wgsl / access_out.wgsl with BUF renamed), the shared
// parts the file names on a second line (`//! use group_reduce`), and the file.
// WGSL has no preprocessor, so this is the whole of the "generation".
// Accessor parameters are named p_*, so binding names must not start so.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "device.hpp"

namespace torsh::webgpu {

namespace {

struct Param {
  std::string name;
  bool out = false;
};

const char* part(const char* name) {
  const char* s = wgsl_source(name);
  if (!s)
    throw Error(ErrorCode::Internal, std::string("no WGSL kernel file kernels/") + name + ".wgsl in this build",
                {.op = "webgpu.kernel"});
  return s;
}

std::vector<Param> parse_bindings(const std::string& name, const std::string& text) {
  const std::string tag = "//! bind";
  if (text.compare(0, tag.size(), tag) != 0)
    throw Error(ErrorCode::Internal, "kernels/" + name + ".wgsl does not start with '//! bind ...'",
                {.op = "webgpu.kernel"});
  std::istringstream line(text.substr(tag.size(), text.find('\n') - tag.size()));
  std::vector<Param> out;
  for (std::string word; line >> word;) {
    const auto colon = word.find(':');
    out.push_back({word.substr(0, colon), colon != std::string::npos && word.substr(colon + 1) == "out"});
  }
  return out;
}

// The shared parts a kernel file names on a second line, `//! use a b`
// (kernels/a.wgsl, kernels/b.wgsl: workgroup reductions, the GEMM tile).
std::vector<std::string> parse_uses(const std::string& text) {
  const std::string tag = "//! use";
  const std::size_t at = text.find('\n');
  std::vector<std::string> out;
  if (at == std::string::npos || text.compare(at + 1, tag.size(), tag) != 0) return out;
  const std::size_t end = text.find('\n', at + 1);
  std::istringstream line(text.substr(at + 1 + tag.size(), end - at - 1 - tag.size()));
  for (std::string word; line >> word;) out.push_back(word);
  return out;
}

std::string renamed(std::string text, const std::string& buf) {
  for (std::size_t at = text.find("BUF"); at != std::string::npos; at = text.find("BUF", at + buf.size()))
    text.replace(at, 3, buf);
  return text;
}

}  // namespace

const WebGpuDevice::Module& WebGpuDevice::module(const char* name) {
  auto it = modules_.find(name);
  if (it != modules_.end()) return it->second;
  const std::string body = part(name);
  const std::vector<Param> params = parse_bindings(name, body);
  std::string src;
  for (std::size_t i = 0; i < params.size(); ++i)
    src += "@group(0) @binding(" + std::to_string(i) + ") var<storage, read_write> " + params[i].name +
           (params[i].out ? ": array<atomic<u32>>;\n" : ": array<u32>;\n");
  src += "@group(0) @binding(" + std::to_string(params.size()) + ") var<storage, read> P: array<u32>;\n";
  src += part("prelude");
  for (const Param& p : params)
    src += renamed(part(p.out ? "access_out" : "access_in"), p.name) + renamed(part("access"), p.name);
  for (const std::string& use : parse_uses(body)) src += part(use.c_str());
  const auto body_line = 1 + std::count(src.begin(), src.end(), '\n');
  src += body;

  Module m;
  m.bindings = params.size();
  WGPUShaderSourceWGSL wgsl = WGPU_SHADER_SOURCE_WGSL_INIT;
  wgsl.code = view(src);
  WGPUShaderModuleDescriptor smd = WGPU_SHADER_MODULE_DESCRIPTOR_INIT;
  smd.nextInChain = &wgsl.chain;
  smd.label = view(name);
  const ScopeResult r =
      scoped(WGPUErrorFilter_Validation, [&] { m.shader = wgpuDeviceCreateShaderModule(device_, &smd); });
  if (r.type != WGPUErrorType_NoError) {
    if (m.shader) wgpuShaderModuleRelease(m.shader);
    // wgpu names lines of the whole module ("wgsl:LINE:COLUMN"); say where the file begins in it.
    throw_wgpu(ErrorCode::KernelCompile, std::string("WGSL compile of kernels/") + name + ".wgsl",
               r.message + "\n(line 1 of kernels/" + name + ".wgsl is line " + std::to_string(body_line) +
                   " of the module; the lines before it are the bindings, prelude.wgsl, the accessors and the "
                   "shared parts the file uses)",
               label_);
  }

  std::vector<WGPUBindGroupLayoutEntry> entries(params.size() + 1);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i] = WGPU_BIND_GROUP_LAYOUT_ENTRY_INIT;
    entries[i].binding = static_cast<std::uint32_t>(i);
    entries[i].visibility = WGPUShaderStage_Compute;
    entries[i].buffer.type = i < params.size() ? WGPUBufferBindingType_Storage : WGPUBufferBindingType_ReadOnlyStorage;
  }
  WGPUBindGroupLayoutDescriptor gd = WGPU_BIND_GROUP_LAYOUT_DESCRIPTOR_INIT;
  gd.entryCount = entries.size();
  gd.entries = entries.data();
  m.group = wgpuDeviceCreateBindGroupLayout(device_, &gd);
  WGPUPipelineLayoutDescriptor pd = WGPU_PIPELINE_LAYOUT_DESCRIPTOR_INIT;
  pd.bindGroupLayoutCount = 1;
  pd.bindGroupLayouts = &m.group;
  m.layout = wgpuDeviceCreatePipelineLayout(device_, &pd);
  return modules_.emplace(name, m).first->second;
}

void WebGpuDevice::check_wgsl(const std::string& source, const std::string& label) {
  WGPUShaderSourceWGSL wgsl = WGPU_SHADER_SOURCE_WGSL_INIT;
  wgsl.code = view(source);
  WGPUShaderModuleDescriptor smd = WGPU_SHADER_MODULE_DESCRIPTOR_INIT;
  smd.nextInChain = &wgsl.chain;
  smd.label = view(label);
  WGPUShaderModule m = nullptr;
  const ScopeResult r = scoped(WGPUErrorFilter_Validation, [&] { m = wgpuDeviceCreateShaderModule(device_, &smd); });
  if (m) wgpuShaderModuleRelease(m);
  if (r.type != WGPUErrorType_NoError)
    throw_wgpu(ErrorCode::KernelCompile, "WGSL compile of " + label, r.message, label_);
}

WGPUComputePipeline WebGpuDevice::pipeline(const char* module_name, const char* entry) {
  const std::string key = std::string(module_name) + ":" + entry;
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return it->second;
  const Module& m = module(module_name);
  WGPUComputePipelineDescriptor cd = WGPU_COMPUTE_PIPELINE_DESCRIPTOR_INIT;
  cd.layout = m.layout;
  cd.compute.module = m.shader;
  cd.compute.entryPoint = view(entry);
  WGPUComputePipeline p = nullptr;
  const ScopeResult r = scoped(WGPUErrorFilter_Validation, [&] { p = wgpuDeviceCreateComputePipeline(device_, &cd); });
  if (r.type != WGPUErrorType_NoError) {
    if (p) wgpuComputePipelineRelease(p);
    throw_wgpu(ErrorCode::KernelCompile, "compute pipeline " + key, r.message, label_);
  }
  return pipelines_.emplace(key, p).first->second;
}

void WebGpuDevice::dispatch(const char* module_name, const char* entry, std::span<const Binding> bindings,
                            std::span<const std::uint32_t> params, std::uint32_t groups_x, std::uint32_t groups_y,
                            std::uint32_t groups_z) {
  if (groups_x == 0 || groups_y == 0 || groups_z == 0) return;
  WGPUComputePipeline p = nullptr;
  WGPUBindGroupLayout group = nullptr;
  {
    std::lock_guard lk(pipeline_mu_);
    p = pipeline(module_name, entry);
    const Module& m = modules_.at(module_name);
    if (m.bindings != bindings.size())
      throw Error(ErrorCode::Internal,
                  std::string("kernels/") + module_name + ".wgsl binds " + std::to_string(m.bindings) +
                      " tensors, the launch gave " + std::to_string(bindings.size()),
                  {.op = entry, .device = label_});
    group = m.group;
  }
  // The params travel in a small buffer of their own, written at creation (no queue ordering to respect),
  // with at least one zero word after them: prelude.wgsl's opaque_zero() reads the last.
  WGPUBufferDescriptor pdsc = WGPU_BUFFER_DESCRIPTOR_INIT;
  pdsc.size = (params.size_bytes() + sizeof(std::uint32_t) + 15) & ~std::size_t{15};
  pdsc.usage = WGPUBufferUsage_Storage;
  pdsc.mappedAtCreation = true;
  WGPUBuffer pbuf = wgpuDeviceCreateBuffer(device_, &pdsc);
  void* mapped = wgpuBufferGetMappedRange(pbuf, 0, pdsc.size);
  std::memset(mapped, 0, pdsc.size);
  if (!params.empty()) std::memcpy(mapped, params.data(), params.size_bytes());
  wgpuBufferUnmap(pbuf);

  std::vector<WGPUBindGroupEntry> entries(bindings.size() + 1);
  for (std::size_t i = 0; i <= bindings.size(); ++i) {
    entries[i] = WGPU_BIND_GROUP_ENTRY_INIT;
    entries[i].binding = static_cast<std::uint32_t>(i);
    if (i < bindings.size()) {
      entries[i].buffer = bindings[i].buffer;
      entries[i].offset = bindings[i].offset;
      entries[i].size = bindings[i].size;
    } else {
      entries[i].buffer = pbuf;
      entries[i].size = pdsc.size;
    }
  }
  WGPUBindGroupDescriptor bd = WGPU_BIND_GROUP_DESCRIPTOR_INIT;
  bd.layout = group;
  bd.entryCount = entries.size();
  bd.entries = entries.data();
  WGPUBindGroup bg = wgpuDeviceCreateBindGroup(device_, &bd);

  std::lock_guard lk(mu_);
  encode_dispatch_locked(p, bg, groups_x, groups_y, groups_z);
  wgpuBindGroupRelease(bg);  // the encoder holds what it uses
  wgpuBufferRelease(pbuf);
  after_command_locked();
}

void WebGpuDevice::encode_dispatch_locked(WGPUComputePipeline p, WGPUBindGroup bg, std::uint32_t x, std::uint32_t y,
                                          std::uint32_t z) {
  WGPUComputePassEncoder pass = wgpuCommandEncoderBeginComputePass(encoder_locked(), nullptr);
  wgpuComputePassEncoderSetPipeline(pass, p);
  wgpuComputePassEncoderSetBindGroup(pass, 0, bg, 0, nullptr);
  wgpuComputePassEncoderDispatchWorkgroups(pass, x, y, z);
  wgpuComputePassEncoderEnd(pass);
  wgpuComputePassEncoderRelease(pass);
}

}  // namespace torsh::webgpu
