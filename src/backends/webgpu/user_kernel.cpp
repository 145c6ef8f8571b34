// User kernels in WGSL, compiled from source at run time.
//
// Binding convention: argument i of a launch is `@group(0) @binding(i)`, in
// argument order, without gaps:
//   - a tensor is a storage buffer, `var<storage, read> x: array<T>` or
//     `var<storage, read_write> y: array<T>` with any element type the kernel
//     likes (f32, i32, u32, f16, vecN<...>, atomic<u32>, a struct); element 0
//     is the tensor's first element (its offset is applied by the binding),
//     and the binding extends to its last element, rounded up to 4 bytes;
//   - a scalar or POD struct is `var<uniform> p: T`, each in its own uniform
//     binding padded to 16 bytes, laid out by WGSL's uniform rules (a vec3 is
//     12 bytes, aligned to 16).
// Other groups, gaps in the numbers, textures and samplers are refused.
// Defines become lines before the module: `const NAME = value;` (value 1 when
// empty), or `alias NAME = value;` when the value is a type such as f32 or
// vec4<f16>; compile messages give the user's own line numbers. No options.
// The launch's block must equal the entry's @workgroup_size (checked where
// the size is a constant expression of literals and consts; an override-sized
// entry is launched with whatever block is given); `grid` is the number of
// work-groups dispatched.
//
// Every storage binding is read-write in the pipeline, as in the library's own
// kernels: tensors of one pool segment share a buffer, and WebGPU refuses one
// buffer bound read-only and writable in one dispatch. wgpu wants the shader's
// access to match the layout's, so the module is compiled as written (which
// keeps `read` bindings unwritable: a store to one is a compile error) and the
// pipeline is made of the same text with each `<storage, read>` rewritten to
// `<storage, read_write>` in place.
//
// Storage bindings must start at a multiple of minStorageBufferOffsetAlignment
// (256 bytes). Whole tensors do; a view whose first element is elsewhere is
// staged: copied into an aligned temporary before the dispatch and, when its
// parameter is writable, copied back after it (only its own bytes, from the
// first to the last element). A staged writable view whose bytes overlap
// another tensor argument's is refused, as the copy back would undo that
// argument's writes.
#include <algorithm>
#include <cstring>
#include <mutex>
// GCC 12 reports std::regex's own std::function members as maybe
// uninitialized when sanitizers change its inlining; the warning is about
// libstdc++, not this file.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <sstream>

#include "launch.hpp"
#include "wgsl_reflect.hpp"

namespace torsh::webgpu {

namespace {

constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

std::string kernel_name(const rt::UserKernelSpec& spec) {
  return spec.src.name.empty() ? spec.src.entry : spec.src.name;
}

// The lines put before the user's module, one per define: `alias NAME = T;` when the value
// is a type (f32, vec4<f32>, ...), else `const NAME = value;`.
std::string define_lines(const rt::UserKernelSpec& spec) {
  static const std::regex type(R"(^\s*(f16|f32|i32|u32|bool|vec[234][fhiu]?|mat[234]x[234][fh]?)\s*(<.*>)?\s*$)");
  std::string s;
  for (const auto& [name, value] : spec.src.defines)
    s += (std::regex_match(value, type) ? "alias " : "const ") + name + " = " + (value.empty() ? "1" : value) + ";\n";
  return s;
}

// wgpu (naga) names places as "wgsl:LINE:COLUMN" or "<label>:LINE:COLUMN" and shows source lines as "LINE │ text":
// renumbered to the user's lines, and the define lines named as such.
std::string user_lines(const std::string& message, const rt::UserKernelSpec& spec) {
  const long added = static_cast<long>(spec.src.defines.size());
  const std::string file = "<" + kernel_name(spec) + ">";
  const auto place = [&](long line) {
    if (line > added || line < 1) return std::to_string(line - added);
    return std::string("define '") + spec.src.defines[static_cast<std::size_t>(line - 1)].first + "'";
  };
  std::string out;
  // Parse errors say "wgsl:", validation errors the module's label (the kernel's name).
  const std::string escaped = std::regex_replace(kernel_name(spec), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
  const std::regex loc("(?:wgsl|" + escaped + R"():(\d{1,9}):(\d+))");
  static const std::regex gutter(R"(^(\s*)(\d{1,9})(\s+│))");
  std::istringstream in(message);
  for (std::string line; std::getline(in, line);) {
    std::string l;
    std::smatch m;
    std::string rest = line;
    while (std::regex_search(rest, m, loc)) {
      const long n = std::stol(m[1].str());
      l += m.prefix().str() + file + ":" + (n > added ? place(n) + ":" + m[2].str() : place(n));
      rest = m.suffix().str();
    }
    l += rest;
    if (std::regex_search(l, m, gutter) && added > 0) {
      const long n = std::stol(m[2].str());
      const std::string num = n > added ? std::to_string(n - added) : "d";
      l = m[1].str() + num + m[3].str() + m.suffix().str();
    }
    out += l + "\n";
  }
  if (!out.empty()) out.pop_back();
  return out;
}

std::string entry_list(const WgslModuleInfo& info) {
  std::string s;
  for (const WgslEntry& e : info.entries) s += (s.empty() ? "" : ", ") + e.name;
  return s.empty() ? "none" : s;
}

std::string dims(const std::optional<std::uint32_t> (&d)[3]) {
  std::string s = "(";
  for (int i = 0; i < 3; ++i) s += (i ? ", " : "") + (d[i] ? std::to_string(*d[i]) : std::string("?"));
  return s + ")";
}

class WebGpuUserKernel final : public rt::UserKernelImpl {
 public:
  WebGpuUserKernel(WebGpuDevice& dev, std::string name, std::vector<KernelParam> params, const WgslEntry& entry,
                   WGPUComputePipeline pipeline, WGPUBindGroupLayout group)
      : dev_(dev),
        name_(std::move(name)),
        params_(std::move(params)),
        entry_(entry),
        pipeline_(pipeline),
        group_(group) {}
  ~WebGpuUserKernel() override {
    wgpuBindGroupLayoutRelease(group_);
    wgpuComputePipelineRelease(pipeline_);
  }
  WebGpuUserKernel(const WebGpuUserKernel&) = delete;
  WebGpuUserKernel& operator=(const WebGpuUserKernel&) = delete;

  const std::vector<KernelParam>& params() const override { return params_; }
  bool params_known() const override { return true; }
  void launch(rt::StreamImpl& s, const Dim3& grid, const Dim3& block, std::span<const rt::LaunchArg> args) override;

 private:
  [[noreturn]] void refuse(const std::string& why, std::vector<std::string> hints = {}) const {
    throw Error(ErrorCode::InvalidArgument, "kernel '" + name_ + "' on " + dev_.label() + ": " + why,
                {.op = name_, .device = dev_.label()}, std::move(hints));
  }
  void check_geometry(const Dim3& grid, const Dim3& block) const;

  WebGpuDevice& dev_;
  std::string name_;
  std::vector<KernelParam> params_;
  WgslEntry entry_;
  WGPUComputePipeline pipeline_;
  WGPUBindGroupLayout group_;
  std::mutex floor_mu_;
  std::vector<std::uint64_t> floor_;  // per binding, the smallest size a validated launch bound
};

void WebGpuUserKernel::check_geometry(const Dim3& grid, const Dim3& block) const {
  const WGPULimits& lim = dev_.limits();
  const std::uint32_t b[3] = {block.x, block.y, block.z}, g[3] = {grid.x, grid.y, grid.z};
  if (entry_.size_known()) {
    if (block.x != *entry_.size[0] || block.y != *entry_.size[1] || block.z != *entry_.size[2])
      refuse("block " + block.to_string() + " differs from the entry's @workgroup_size" + dims(entry_.size),
             {"WebGPU fixes the work-group size in the shader: launch with block = " + dims(entry_.size) +
              ", or change @workgroup_size (a define can set it)"});
  }
  if (block.volume() > lim.maxComputeInvocationsPerWorkgroup)
    refuse("block " + block.to_string() + " has " + std::to_string(block.volume()) +
               " invocations; the device allows " + std::to_string(lim.maxComputeInvocationsPerWorkgroup) +
               " (maxComputeInvocationsPerWorkgroup)",
           {"Use a smaller @workgroup_size and more work-groups"});
  const std::uint32_t per_dim[3] = {lim.maxComputeWorkgroupSizeX, lim.maxComputeWorkgroupSizeY,
                                    lim.maxComputeWorkgroupSizeZ};
  for (int d = 0; d < 3; ++d) {
    const char axis = "xyz"[d];
    if (b[d] > per_dim[d])
      refuse("block " + block.to_string() + ": " + axis + " = " + std::to_string(b[d]) + " is over the device's " +
                 std::to_string(per_dim[d]) + " (maxComputeWorkgroupSize" + char(axis - 32) + ")",
             {"Spread the work-group over another dimension"});
    if (g[d] > lim.maxComputeWorkgroupsPerDimension)
      refuse("grid " + grid.to_string() + ": " + axis + " = " + std::to_string(g[d]) +
                 " work-groups, over the device's " + std::to_string(lim.maxComputeWorkgroupsPerDimension) +
                 " per dimension (maxComputeWorkgroupsPerDimension)",
             {"Spread the work-groups over y and z (e.g. grid (" +
              std::to_string(lim.maxComputeWorkgroupsPerDimension) + ", " +
              std::to_string((g[d] + lim.maxComputeWorkgroupsPerDimension - 1) / lim.maxComputeWorkgroupsPerDimension) +
              ")) and rebuild the index from workgroup_id, or give each invocation more items"});
    // global_invocation_id is a vec3<u32>.
    if (std::uint64_t(g[d]) * b[d] > 0xffffffffull)
      refuse("grid " + grid.to_string() + " x block " + block.to_string() + " overflows 32-bit invocation ids along " +
                 axis,
             {"Launch fewer items per dimension"});
  }
}

void WebGpuUserKernel::launch(rt::StreamImpl&, const Dim3& grid, const Dim3& block,
                              std::span<const rt::LaunchArg> args) {
  check_geometry(grid, block);
  if (args.size() != params_.size())
    refuse(std::to_string(args.size()) + " arguments given, the module declares " + std::to_string(params_.size()) +
           " bindings");
  const WGPULimits& lim = dev_.limits();
  const std::uint64_t storage_align = std::max<std::uint32_t>(4, lim.minStorageBufferOffsetAlignment);
  const std::uint64_t uniform_align = std::max<std::uint32_t>(16, lim.minUniformBufferOffsetAlignment);

  // Values: one uniform buffer per launch, each value at its own aligned offset, padded to 16 bytes.
  std::vector<std::uint64_t> value_at(args.size(), 0);
  std::uint64_t uniform_bytes = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const rt::LaunchArg& a = args[i];
    if (params_[i].kind == KernelParam::Kind::Value) {
      if (a.tensor || !a.data)
        refuse("argument " + std::to_string(i) + " ('" + params_[i].name + "') is a uniform value; a tensor was given");
      if (params_[i].size && a.size != params_[i].size)
        refuse("argument " + std::to_string(i) + " ('" + params_[i].name + "') is " + std::to_string(a.size) +
                   " bytes; the module's " + params_[i].spelling + " is " + std::to_string(params_[i].size) +
                   " bytes under WGSL's uniform layout",
               {"Pass a value of the uniform's type (a vec3<f32> is 12 bytes, a struct is padded to its alignment)"});
      if (std::max(a.size, params_[i].size) > lim.maxUniformBufferBindingSize)
        refuse("argument " + std::to_string(i) + " ('" + params_[i].name + "') is " + std::to_string(a.size) +
                   " bytes, over the device's " + std::to_string(lim.maxUniformBufferBindingSize) +
                   " per uniform binding (maxUniformBufferBindingSize)",
               {"Pass large data as a tensor (a storage binding)"});
      uniform_bytes = round_up(uniform_bytes, uniform_align);
      value_at[i] = uniform_bytes;
      uniform_bytes += round_up(std::max<std::size_t>({a.size, params_[i].size, 1}), 16);
    } else if (!a.tensor) {
      refuse("argument " + std::to_string(i) + " ('" + params_[i].name + "') is a storage buffer; a value was given");
    }
  }

  struct Owned {  // buffers made for this launch: released once encoded (wgpu keeps them while in use)
    std::vector<WGPUBuffer> v;
    ~Owned() {
      for (WGPUBuffer b : v) wgpuBufferRelease(b);
    }
  } owned;
  WGPUBuffer uniforms = nullptr;
  if (uniform_bytes) {
    WGPUBufferDescriptor d = WGPU_BUFFER_DESCRIPTOR_INIT;
    d.size = round_up(uniform_bytes, 16);
    d.usage = WGPUBufferUsage_Uniform;
    d.mappedAtCreation = true;
    uniforms = wgpuDeviceCreateBuffer(dev_.handle(), &d);
    if (!uniforms) refuse("no uniform buffer of " + std::to_string(d.size) + " bytes could be made");
    owned.v.push_back(uniforms);
    auto* p = static_cast<unsigned char*>(wgpuBufferGetMappedRange(uniforms, 0, d.size));
    std::memset(p, 0, d.size);
    for (std::size_t i = 0; i < args.size(); ++i)
      if (params_[i].kind == KernelParam::Kind::Value && args[i].size)
        std::memcpy(p + value_at[i], args[i].data, args[i].size);
    wgpuBufferUnmap(uniforms);
  }

  std::vector<WGPUBindGroupEntry> entries(args.size());
  std::vector<WebGpuDevice::ByteCopy> before, after;
  struct Staged {
    WGPUBuffer buffer;
    std::uint64_t first, end;
    WGPUBuffer temp;
    bool copied_back;
  };
  std::vector<Staged> staged;
  for (std::size_t i = 0; i < args.size(); ++i) {
    WGPUBindGroupEntry& e = entries[i];
    e = WGPU_BIND_GROUP_ENTRY_INIT;
    e.binding = static_cast<std::uint32_t>(i);
    if (params_[i].kind == KernelParam::Kind::Value) {
      e.buffer = uniforms;
      e.offset = value_at[i];
      e.size = round_up(std::max<std::size_t>({args[i].size, params_[i].size, 1}), 16);
      continue;
    }
    const rt::TensorArg& t = *args[i].tensor;
    const WGPUBuffer buf = buffer_of(*t.buffer);
    if (t.numel() == 0) {  // nothing to read or write: a scratch word keeps the binding valid
      WGPUBuffer scratch = dev_.make_buffer(16, WGPUBufferUsage_Storage, "empty tensor binding");
      owned.v.push_back(scratch);
      e.buffer = scratch;
      e.size = 16;
      continue;
    }
    for (std::size_t d = 0; d < t.shape.ndim(); ++d)
      if (t.strides[d] < 0)
        refuse("argument " + std::to_string(i) + " ('" + params_[i].name +
               "') has a negative stride; bind a contiguous copy");
    const auto [first, end] = span_bytes(t);
    const std::uint64_t size = round_up(end, 4) - first;
    if (size > lim.maxStorageBufferBindingSize)
      refuse("argument " + std::to_string(i) + " ('" + params_[i].name + "') spans " + std::to_string(size) +
                 " bytes; one storage binding holds at most " + std::to_string(lim.maxStorageBufferBindingSize) +
                 " (maxStorageBufferBindingSize)",
             {"Launch over parts of the tensor, one slice at a time"});
    if (first % storage_align == 0) {
      e.buffer = buf;
      e.offset = first;
      e.size = size;
      continue;
    }
    // Not at a binding boundary: through an aligned temporary, one per distinct range (an
    // in-place kernel given one view twice sees one copy).
    const bool writes = params_[i].writable && args[i].writable;
    if (writes) {
      for (std::size_t j = 0; j < args.size(); ++j) {
        if (j == i || !args[j].tensor || args[j].tensor->numel() == 0 || buffer_of(*args[j].tensor->buffer) != buf)
          continue;
        const auto [f2, e2] = span_bytes(*args[j].tensor);
        if (f2 < end && first < e2 && !(f2 == first && e2 == end))
          refuse("argument " + std::to_string(i) + " ('" + params_[i].name + "') starts " +
                     std::to_string(first % storage_align) + " bytes past a " + std::to_string(storage_align) +
                     "-byte binding boundary, so it is staged through a copy, and its bytes overlap argument " +
                     std::to_string(j) + "'s: copying it back would undo that argument's writes",
                 {"Pass a contiguous copy (Tensor::contiguous / clone) of one of them"});
      }
    }
    // The temporary starts at the first element: its binding is the elements' bytes in whole words.
    const std::uint64_t staged_size = round_up(end - first, 4);
    auto same = std::find_if(staged.begin(), staged.end(),
                             [&](const Staged& st) { return st.buffer == buf && st.first == first && st.end == end; });
    if (same == staged.end()) {
      WGPUBuffer tmp =
          dev_.make_buffer(staged_size, WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst,
                           "staged tensor argument");
      owned.v.push_back(tmp);
      before.push_back({buf, first, tmp, 0, end - first});
      same = staged.insert(staged.end(), {buf, first, end, tmp, false});
    }
    if (writes && !same->copied_back) {
      after.push_back({same->temp, 0, buf, first, end - first});
      same->copied_back = true;
    }
    e.buffer = same->temp;
    e.size = staged_size;
  }

  WGPUBindGroupDescriptor bd = WGPU_BIND_GROUP_DESCRIPTOR_INIT;
  bd.layout = group_;
  bd.entryCount = entries.size();
  bd.entries = entries.data();
  const std::string label = "user kernel " + name_;
  bd.label = view(label);
  // WebGPU checks a dispatch's binding sizes against the shader only when its command buffer is
  // finished, and wgpu-native aborts on submitting an invalid one. Everything else about the
  // bindings is checked above (alignment, whole words, limits, usage), and the size check is
  // per binding (at least the shader's minimum), so once a launch with some sizes passed, any
  // launch with sizes at least as large passes too: only smaller ones are validated again.
  std::vector<std::uint64_t> sizes(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) sizes[i] = entries[i].size;
  bool validate = true;
  {
    std::lock_guard lk(floor_mu_);
    if (!floor_.empty()) {
      validate = false;
      for (std::size_t i = 0; i < sizes.size(); ++i) validate = validate || sizes[i] < floor_[i];
    }
  }
  dev_.dispatch_checked(pipeline_, bd, before, after, grid.x, grid.y, grid.z, validate, "kernel '" + name_ + "'");
  if (validate) {
    std::lock_guard lk(floor_mu_);
    if (floor_.empty()) floor_ = sizes;
    for (std::size_t i = 0; i < sizes.size(); ++i) floor_[i] = std::min(floor_[i], sizes[i]);
  }
}

// Whether the bytes can be handed to wgpu as WGSL text: UTF-8 without NUL.
bool valid_utf8_text(std::span<const std::uint8_t> b) {
  std::size_t i = 0;
  while (i < b.size()) {
    const std::uint8_t c = b[i++];
    if (c == 0) return false;
    const int more = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (more < 0) return false;
    for (int k = 0; k < more; ++k)
      if (i >= b.size() || (b[i++] & 0xC0) != 0x80) return false;
  }
  return true;
}

}  // namespace

void WebGpuDevice::BuiltKernel::release() {
  if (pipeline) wgpuComputePipelineRelease(pipeline);
  if (group) wgpuBindGroupLayoutRelease(group);
  pipeline = nullptr;
  group = nullptr;
  text.clear();
}

std::string WebGpuDevice::kernel_compiler_id() const {
  // Asked on every compile_kernel (it is part of the cache key): made once.
  std::call_once(compiler_id_once_, [this] { compiler_id_ = make_compiler_id(); });
  return compiler_id_;
}

std::string WebGpuDevice::make_compiler_id() const {
  const std::uint32_t v = wgpuGetVersion();
  WGPUAdapterInfo ai = WGPU_ADAPTER_INFO_INIT;
  wgpuAdapterGetInfo(adapter_, &ai);
  const char* backend = ai.backendType == WGPUBackendType_Vulkan   ? "Vulkan"
                        : ai.backendType == WGPUBackendType_Metal  ? "Metal"
                        : ai.backendType == WGPUBackendType_D3D12  ? "D3D12"
                        : ai.backendType == WGPUBackendType_OpenGL ? "OpenGL"
                                                                   : "other";
  // "wgpu-native 29.0.1.1 / WGSL / llvmpipe (LLVM 15.0.6, 256 bits) / Vulkan / Mesa 22.3.6 (LLVM 15.0.6) / ..."
  std::string id = "wgpu-native " + std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 255) + "." +
                   std::to_string((v >> 8) & 255) + "." + std::to_string(v & 255) + " / WGSL / " +
                   to_string(ai.device) + " / " + backend;
  for (const WGPUStringView part : {ai.description, ai.vendor, ai.architecture})
    if (const std::string p = to_string(part); !p.empty()) id += " / " + p;
  id += " / " + std::to_string(ai.vendorID) + ":" + std::to_string(ai.deviceID);
  wgpuAdapterInfoFreeMembers(ai);
  return id;
}

WebGpuDevice::BuiltKernel WebGpuDevice::build_user(const rt::UserKernelSpec& spec, const std::string& text) {
  const std::string name = kernel_name(spec);
  const std::string what = spec.label.empty() ? "kernel '" + name + "'" : spec.label;
  const ErrorContext ctx{.op = "compile_kernel", .device = label_};
  if (spec.src.dialect != KernelDialect::Wgsl)
    throw Error(ErrorCode::InvalidArgument,
                what + " is in the " + std::string(kernel_dialect_name(spec.src.dialect)) +
                    " dialect; the WebGPU backend builds WGSL only",
                ctx, {"Write the kernel in WGSL (KernelDialect::Wgsl)"});
  if (!spec.src.options.empty())
    throw Error(
        ErrorCode::InvalidArgument,
        what + ": WGSL kernels take no compiler options (given: '" + spec.src.options.front() + "'" +
            (spec.src.options.size() > 1 ? " and " + std::to_string(spec.src.options.size() - 1) + " more" : "") + ")",
        ctx, {"Drop the options; use defines for constants"});
  static const std::regex identifier(R"([A-Za-z_][A-Za-z0-9_]*)");
  for (const auto& [dname, value] : spec.src.defines)
    if (!std::regex_match(dname, identifier) || value.find_first_of("\r\n;") != std::string::npos)
      throw Error(ErrorCode::InvalidArgument,
                  what + ": define '" + dname + "' = '" + value +
                      "' cannot be a WGSL declaration (the name must be an identifier, the value one line "
                      "without ';')",
                  ctx, {"Give defines as NAME = value, e.g. {\"WG\", \"64u\"} or {\"T\", \"f32\"}"});
  const WgslModuleInfo info = reflect_wgsl(text);
  const std::vector<KernelParam> params = wgsl_params(info, what);  // throws on bindings outside the convention
  if (!info.entry(spec.src.entry))
    throw Error(ErrorCode::KernelCompile,
                what + ": no @compute entry point named '" + spec.src.entry + "' on " + label_ +
                    "; the module's @compute entry points: " + entry_list(info),
                ctx, {"Name one of the module's @compute functions as the entry"});
  // wgpu-native does not hold a module to maxComputeWorkgroupStorageSize
  // (lavapipe then runs it anyway; a GPU driver may fail the pipeline or
  // worse), so the declared workgroup memory is checked here.
  const std::size_t wg_limit = limits_.maxComputeWorkgroupStorageSize;
  if (info.workgroup_bytes && *info.workgroup_bytes > wg_limit)
    throw Error(ErrorCode::InvalidArgument,
                what + ": its var<workgroup> declarations take " + std::to_string(*info.workgroup_bytes) +
                    " bytes, more than " + std::to_string(wg_limit) + ", the maxComputeWorkgroupStorageSize of " +
                    label_,
                ctx,
                {"Use smaller workgroup arrays: tile the work so one workgroup needs at most " +
                 std::to_string(wg_limit) + " bytes"});

  const auto compile = [&](const std::string& code) {
    WGPUShaderSourceWGSL wgsl = WGPU_SHADER_SOURCE_WGSL_INIT;
    wgsl.code = view(code);
    WGPUShaderModuleDescriptor smd = WGPU_SHADER_MODULE_DESCRIPTOR_INIT;
    smd.nextInChain = &wgsl.chain;
    smd.label = view(name);
    WGPUShaderModule shader = nullptr;
    const ScopeResult r =
        scoped(WGPUErrorFilter_Validation, [&] { shader = wgpuDeviceCreateShaderModule(device_, &smd); });
    if (r.type != WGPUErrorType_NoError) {
      if (shader) wgpuShaderModuleRelease(shader);
      throw Error(ErrorCode::KernelCompile,
                  "WGSL compile of " + what + " (entry '" + spec.src.entry + "') failed on " + label_ + ":\n" +
                      user_lines(r.message, spec),
                  ctx, {"Fix the WGSL at the line and column the message names"});
    }
    return shader;
  };
  // The module as written is what is checked (a write to a `read` binding is an error there);
  // the pipeline is made of the same module with its storage bindings read-write (see the top).
  WGPUShaderModule shader = compile(text);
  if (const std::string rw = storage_read_write(text, info); rw != text) {
    wgpuShaderModuleRelease(shader);
    shader = compile(rw);
  }
  std::vector<WGPUBindGroupLayoutEntry> le(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    le[i] = WGPU_BIND_GROUP_LAYOUT_ENTRY_INIT;
    le[i].binding = static_cast<std::uint32_t>(i);
    le[i].visibility = WGPUShaderStage_Compute;
    le[i].buffer.type =
        params[i].kind == KernelParam::Kind::Buffer ? WGPUBufferBindingType_Storage : WGPUBufferBindingType_Uniform;
  }
  BuiltKernel k;
  k.text = text;
  WGPUBindGroupLayoutDescriptor gd = WGPU_BIND_GROUP_LAYOUT_DESCRIPTOR_INIT;
  gd.entryCount = le.size();
  gd.entries = le.data();
  WGPUPipelineLayout layout = nullptr;
  const ScopeResult r = scoped(WGPUErrorFilter_Validation, [&] {
    k.group = wgpuDeviceCreateBindGroupLayout(device_, &gd);
    WGPUPipelineLayoutDescriptor pd = WGPU_PIPELINE_LAYOUT_DESCRIPTOR_INIT;
    pd.bindGroupLayoutCount = 1;
    pd.bindGroupLayouts = &k.group;
    layout = wgpuDeviceCreatePipelineLayout(device_, &pd);
    WGPUComputePipelineDescriptor cd = WGPU_COMPUTE_PIPELINE_DESCRIPTOR_INIT;
    cd.layout = layout;
    cd.compute.module = shader;
    cd.compute.entryPoint = view(spec.src.entry);
    cd.label = view(name);
    k.pipeline = wgpuDeviceCreateComputePipeline(device_, &cd);
  });
  wgpuPipelineLayoutRelease(layout);
  wgpuShaderModuleRelease(shader);
  if (r.type != WGPUErrorType_NoError) {
    k.release();
    throw Error(ErrorCode::KernelCompile,
                "compute pipeline of " + what + " (entry '" + spec.src.entry + "') failed on " + label_ + ":\n" +
                    user_lines(r.message, spec),
                ctx, {"Check the bindings against the convention: argument i at @group(0) @binding(i)"});
  }
  return k;
}

rt::KernelBinary WebGpuDevice::build_kernel(const rt::UserKernelSpec& spec) {
  // WGSL has no binary form: the "binary" is the module as compiled, defines included.
  const std::string text = define_lines(spec) + spec.src.source;
  BuiltKernel k = build_user(spec, text);
  k.entry = spec.src.entry;
  {
    std::lock_guard lk(built_mu_);
    built_.release();
    built_ = std::move(k);
  }
  rt::KernelBinary b;
  b.bytes.assign(text.begin(), text.end());
  b.cacheable = false;  // reloading the text compiles it again: nothing to save
  return b;
}

std::unique_ptr<rt::UserKernelImpl> WebGpuDevice::load_kernel(const rt::UserKernelSpec& spec,
                                                              std::span<const std::uint8_t> binary) {
  if (!valid_utf8_text(binary))
    throw Error(ErrorCode::KernelCompile,
                "the bytes given for kernel '" + kernel_name(spec) + "' are not WGSL text (not UTF-8, or holding NUL)",
                {.op = "load_kernel", .device = label_}, {"Rebuild the kernel from its source"});
  const std::string text(binary.begin(), binary.end());
  BuiltKernel k;
  {
    std::lock_guard lk(built_mu_);
    if (built_.pipeline && built_.text == text && built_.entry == spec.src.entry) {
      k = built_;
      built_ = BuiltKernel{};
    }
  }
  if (!k.pipeline) k = build_user(spec, text);
  const WgslModuleInfo info = reflect_wgsl(text);
  const std::string what = spec.label.empty() ? "kernel '" + kernel_name(spec) + "'" : spec.label;
  std::vector<KernelParam> params;
  try {
    params = wgsl_params(info, what);
  } catch (...) {
    k.release();
    throw;
  }
  return std::make_unique<WebGpuUserKernel>(*this, kernel_name(spec), std::move(params), *info.entry(spec.src.entry),
                                            k.pipeline, k.group);
}

void WebGpuDevice::dispatch_checked(WGPUComputePipeline pipeline, const WGPUBindGroupDescriptor& group,
                                    std::span<const ByteCopy> before, std::span<const ByteCopy> after,
                                    std::uint32_t groups_x, std::uint32_t groups_y, std::uint32_t groups_z,
                                    bool validate, const std::string& what) {
  std::lock_guard lk(mu_);  // recursive: copy_bytes takes it again
  if (!validate) {
    for (const ByteCopy& c : before) copy_bytes(c.src, c.src_offset, c.dst, c.dst_offset, c.bytes);
    WGPUBindGroup bg = wgpuDeviceCreateBindGroup(device_, &group);
    encode_dispatch_locked(pipeline, bg, groups_x, groups_y, groups_z);
    wgpuBindGroupRelease(bg);  // the encoder holds what it uses
    after_command_locked();
    for (const ByteCopy& c : after) copy_bytes(c.src, c.src_offset, c.dst, c.dst_offset, c.bytes);
    return;
  }
  // wgpu-native aborts the process when a submitted command buffer is invalid, and a dispatch's
  // bindings are only checked against the shader when its command buffer is finished. So the
  // dispatch gets a command buffer of its own, finished inside an error scope, and is dropped
  // there when WebGPU refuses it; what came before it is finished first to keep the order.
  finish_encoder_locked();
  WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(device_, nullptr);
  WGPUCommandBuffer cb = nullptr;
  const ScopeResult r = scoped(WGPUErrorFilter_Validation, [&] {
    WGPUBindGroup bg = wgpuDeviceCreateBindGroup(device_, &group);
    WGPUComputePassEncoder pass = wgpuCommandEncoderBeginComputePass(enc, nullptr);
    wgpuComputePassEncoderSetPipeline(pass, pipeline);
    wgpuComputePassEncoderSetBindGroup(pass, 0, bg, 0, nullptr);
    wgpuComputePassEncoderDispatchWorkgroups(pass, groups_x, groups_y, groups_z);
    wgpuComputePassEncoderEnd(pass);
    wgpuComputePassEncoderRelease(pass);
    wgpuBindGroupRelease(bg);
    cb = wgpuCommandEncoderFinish(enc, nullptr);
  });
  wgpuCommandEncoderRelease(enc);
  if (r.type != WGPUErrorType_NoError) {
    if (cb) wgpuCommandBufferRelease(cb);
    throw Error(ErrorCode::InvalidArgument, what + " on " + label_ + ": WebGPU refused the dispatch: " + r.message,
                {.op = what, .device = label_},
                {"Check each tensor against its binding: a binding must hold at least one element of its array "
                 "(and a whole fixed-size array or struct)"});
  }
  // Staged inputs are copied in the open encoder, which is finished ahead of the dispatch.
  for (const ByteCopy& c : before) copy_bytes(c.src, c.src_offset, c.dst, c.dst_offset, c.bytes);
  finish_encoder_locked();
  finished_.push_back(cb);
  after_command_locked();
  for (const ByteCopy& c : after) copy_bytes(c.src, c.src_offset, c.dst, c.dst_offset, c.bytes);
}

}  // namespace torsh::webgpu
