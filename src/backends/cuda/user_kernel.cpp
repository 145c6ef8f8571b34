// User kernels on a CUDA / ROCm device: built by NVRTC / hiprtc
// (user_kernel_compile.cpp), kept as bytes that name their entry's symbol,
// loaded as a module and launched on the stream's handle (module_api.hpp).
#include <limits>
#include <optional>

#include "device.hpp"
#include "kernel_binary.hpp"
#include "module_api.hpp"
#include "user_kernel_compile.hpp"

namespace torsh::cuda {

namespace {

#if defined(TORSH_HIP)
constexpr CodeKind kCode = CodeKind::AmdgpuElf;
#else
constexpr CodeKind kCode = CodeKind::Ptx;
#endif

class CudaUserKernel final : public rt::UserKernelImpl {
 public:
  // `declared` are the parameter sizes the code declares (PTX, the code
  // object's metadata), for drivers that cannot tell them.
  CudaUserKernel(CudaDevice& dev, const rt::UserKernelSpec& spec, module_api::Module m, module_api::Function f,
                 std::optional<std::vector<std::size_t>> declared)
      : dev_(dev),
        name_(spec.src.name.empty() ? spec.src.entry : spec.src.name),
        module_(m),
        fn_(f),
        params_(spec.params),
        known_(spec.params_known) {
    fn_max_threads_ = module_api::max_threads_per_block(f);
    std::optional<std::vector<std::size_t>> sizes = module_api::param_sizes(f);
    refine(sizes ? std::move(sizes) : std::move(declared));
  }
  ~CudaUserKernel() override {
    try {
      DeviceGuard g(dev_.ordinal(), dev_.label());
      module_api::unload(module_);
    } catch (...) {  // the process is ending or the device is gone: nothing left to free
    }
  }
  CudaUserKernel(const CudaUserKernel&) = delete;
  CudaUserKernel& operator=(const CudaUserKernel&) = delete;

  const std::vector<KernelParam>& params() const override { return params_; }
  bool params_known() const override { return known_; }

  void launch(rt::StreamImpl& s, const Dim3& grid, const Dim3& block, std::span<const rt::LaunchArg> args) override {
    check_geometry(grid, block);
    const std::size_t n = args.size();
    const std::size_t expected = sizes_ ? sizes_->size() : known_ ? params_.size() : n;
    if (n != expected)
      refuse("takes " + std::to_string(expected) + " arguments, " + std::to_string(n) + " given",
             "Pass one argument per parameter of the entry");
    std::vector<void*> pointers(n), slots(n);
    for (std::size_t i = 0; i < n; ++i) {
      const rt::LaunchArg& a = args[i];
      const std::size_t want = sizes_ ? (*sizes_)[i] : 0;
      if (a.tensor) {
        if (!a.tensor->buffer) refuse("argument " + std::to_string(i) + " is a tensor without storage", "");
        if (want != 0 && want != sizeof(void*))
          refuse("parameter " + std::to_string(i) + " takes " + std::to_string(want) + " bytes by value, not a tensor",
                 "Pass a value of the parameter's type");
        const auto element = static_cast<std::int64_t>(dtype_size(a.tensor->dtype));
        pointers[i] = bytes_of(*a.tensor->buffer) + a.tensor->offset * element;
        slots[i] = &pointers[i];
      } else {
        if (!a.data || a.size == 0) refuse("argument " + std::to_string(i) + " has no value", "");
        if (want != 0 && want != a.size)
          refuse("parameter " + std::to_string(i) + " takes " + std::to_string(want) + " bytes, a value of " +
                     std::to_string(a.size) + " bytes given",
                 "Pass a value of the parameter's type (a pointer parameter takes a tensor)");
        slots[i] = const_cast<void*>(a.data);  // the driver copies the values at the launch
      }
    }
    CudaStream& cs = stream_of(s);
    DeviceGuard g(dev_.ordinal(), dev_.label());
    module_api::launch(fn_, grid, block, cs.handle(), slots.data(), name_, dev_.label());
  }

 private:
  [[noreturn]] void refuse(const std::string& why, const std::string& hint) const {
    throw Error(ErrorCode::InvalidArgument, "kernel '" + name_ + "' on " + dev_.label() + ": " + why,
                {.op = name_, .device = dev_.label()}, hint.empty() ? std::vector<std::string>{} : std::vector{hint});
  }

  // Refuses what the device cannot run, naming its limit, before the driver does.
  void check_geometry(const Dim3& grid, const Dim3& block) const {
    const auto& l = dev_.launch_limits();
    // Messages are formatted only when a check fails.
    const auto launch = [&] { return "grid " + grid.to_string() + " x block " + block.to_string(); };
    const char* axis[3] = {"x", "y", "z"};
    const std::uint32_t b[3] = {block.x, block.y, block.z}, g[3] = {grid.x, grid.y, grid.z};
    const auto smaller = [&] {
      return "Use blocks of at most " + std::to_string(l.threads_per_block) +
             " threads (256 is a good start) and more blocks";
    };
    for (int d = 0; d < 3; ++d) {
      if (b[d] > static_cast<std::uint32_t>(l.block[d]))
        refuse(launch() + ": block." + axis[d] + " = " + std::to_string(b[d]) + " exceeds the device's limit of " +
                   std::to_string(l.block[d]) + " (maxThreadsDim[" + std::to_string(d) + "])",
               smaller());
      if (g[d] > static_cast<std::uint32_t>(l.grid[d]))
        refuse(launch() + ": grid." + axis[d] + " = " + std::to_string(g[d]) + " exceeds the device's limit of " +
                   std::to_string(l.grid[d]) + " (maxGridSize[" + std::to_string(d) + "])",
               "Put the excess on another grid dimension, or loop inside the kernel (grid-stride)");
#if defined(TORSH_HIP)
      // AMD's dispatch packet counts work-items, not blocks, per dimension in 32 bits.
      if (std::uint64_t(g[d]) * b[d] > 0xffffffffull)
        refuse(launch() + ": " + std::to_string(std::uint64_t(g[d]) * b[d]) + " work-items along " + axis[d] +
                   " exceed the device's limit of 4294967295 (grid times block per dimension)",
               "Put the excess on another grid dimension, or loop inside the kernel (grid-stride)");
#endif
    }
    if (block.volume() > static_cast<std::uint64_t>(l.threads_per_block))
      refuse(launch() + ": a block of " + std::to_string(block.volume()) + " threads exceeds the device's limit of " +
                 std::to_string(l.threads_per_block) + " (maxThreadsPerBlock)",
             smaller());
    if (fn_max_threads_ > 0 && block.volume() > static_cast<std::uint64_t>(fn_max_threads_))
      refuse(launch() + ": a block of " + std::to_string(block.volume()) + " threads exceeds this kernel's limit of " +
                 std::to_string(fn_max_threads_) + " (its registers or shared memory allow no more)",
             "Use blocks of at most " + std::to_string(fn_max_threads_) + " threads");
    if (grid.volume() > std::numeric_limits<std::uint64_t>::max() / block.volume())
      refuse(launch() + ": the total number of threads overflows 64 bits", "Launch fewer threads");
  }

  // The driver's (or the code's) parameter sizes are the truth: a value's parsed size is
  // completed from them, and when the parsed list disagrees with them in count
  // or in a size, the launch checks against the driver's list alone.
  void refine(std::optional<std::vector<std::size_t>> sizes) {
    if (!sizes) return;
    sizes_ = std::move(sizes);
    bool agree = known_ && params_.size() == sizes_->size();
    for (std::size_t i = 0; agree && i < params_.size(); ++i) {
      KernelParam& p = params_[i];
      const std::size_t s = (*sizes_)[i];
      if (p.kind == KernelParam::Kind::Buffer) {
        agree = s == sizeof(void*);
      } else if (p.size == 0) {
        p.size = s;
      } else {
        agree = p.size == s;
      }
    }
    if (agree) return;
    // Kinds are unknown to the driver (a pointer and a 64-bit value look alike): sizes only.
    params_.clear();
    for (std::size_t s : *sizes_) {
      KernelParam p;
      p.kind = KernelParam::Kind::Value;
      p.size = s;
      params_.push_back(p);
    }
    known_ = false;
  }

  CudaDevice& dev_;
  std::string name_;
  module_api::Module module_;
  module_api::Function fn_;
  std::vector<KernelParam> params_;
  bool known_;
  int fn_max_threads_ = 0;
  std::optional<std::vector<std::size_t>> sizes_;  // from the driver, where it tells
};

std::string what_of(const rt::UserKernelSpec& spec) {
  return spec.label.empty() ? "kernel '" + spec.src.entry + "'" : spec.label;
}

}  // namespace

std::string CudaDevice::kernel_compiler_id() const {
  // The compiler, the driver that turns PTX into machine code (or loads the
  // code object) and the architecture: an upgrade of either rebuilds.
  return rtc_version() + " / " + info_.driver_version + " / " + info_.name + " " + rtc_arch_;
}

rt::KernelBinary CudaDevice::build_kernel(const rt::UserKernelSpec& spec) {
  CompiledKernel c = compile_user_kernel(spec, rtc_arch_, label_);
  rt::KernelBinary b;
  b.bytes = pack_kernel_binary(kCode, c.lowered_name, c.code);
  b.log = std::move(c.log);
  return b;
}

std::unique_ptr<rt::UserKernelImpl> CudaDevice::load_kernel(const rt::UserKernelSpec& spec,
                                                            std::span<const std::uint8_t> binary) {
  const std::string what = what_of(spec);
  const KernelImage u = unpack_kernel_binary(kCode, binary, what, label_);
  DeviceGuard g(ordinal_, label_);
  module_api::Module m = module_api::load(u.code.data(), what, label_);
  try {
    module_api::Function f = module_api::function(m, u.symbol, what, label_);
#if defined(TORSH_HIP)
    std::optional<std::vector<std::size_t>> declared = amdgpu_param_sizes(u.code, u.symbol);
#else
    std::optional<std::vector<std::size_t>> declared = ptx_param_sizes(u.code, u.symbol);
#endif
    return std::make_unique<CudaUserKernel>(*this, spec, m, f, std::move(declared));
  } catch (...) {
    module_api::unload(m);
    throw;
  }
}

}  // namespace torsh::cuda
