// User kernels on a CUDA / ROCm device: built by NVRTC / hiprtc
// (user_kernel_compile.cpp), kept as bytes that name their entry's symbol,
// loaded as a module and launched on the stream's handle (module_api.hpp).
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "device.hpp"
#include "module_api.hpp"
#include "user_kernel_compile.hpp"

namespace torsh::cuda {

namespace {

// A build's bytes: a header, the entry's symbol (mangled for C++ entries, so
// it must travel with the code) and the code. The checksum makes a truncated
// or foreign disk-cache file an error here, before the driver parses it.
//   magic[8] | u32 symbol bytes | u32 0 | u64 code bytes | u64 FNV-1a of symbol and code
#if defined(TORSH_HIP)
constexpr char kMagic[8] = {'T', 'R', 'S', 'H', 'H', 'C', 'O', '1'};  // an AMDGPU code object
#else
constexpr char kMagic[8] = {'T', 'R', 'S', 'H', 'P', 'T', 'X', '1'};  // PTX text
#endif
constexpr std::size_t kHeader = 32;

std::uint64_t fnv1a(std::uint64_t h, const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::uint64_t checksum(const std::string& symbol, std::span<const std::uint8_t> code) {
  const std::uint64_t h = fnv1a(0xcbf29ce484222325ull, reinterpret_cast<const std::uint8_t*>(symbol.data()), symbol.size());
  return fnv1a(h, code.data(), code.size());
}

std::vector<std::uint8_t> pack(const CompiledKernel& c) {
  std::vector<std::uint8_t> out(kHeader + c.lowered_name.size() + c.code.size());
  const std::uint32_t name_len = static_cast<std::uint32_t>(c.lowered_name.size()), zero = 0;
  const std::uint64_t code_len = c.code.size(), sum = checksum(c.lowered_name, c.code);
  std::memcpy(out.data(), kMagic, 8);
  std::memcpy(out.data() + 8, &name_len, 4);
  std::memcpy(out.data() + 12, &zero, 4);
  std::memcpy(out.data() + 16, &code_len, 8);
  std::memcpy(out.data() + 24, &sum, 8);
  std::memcpy(out.data() + kHeader, c.lowered_name.data(), name_len);
  std::memcpy(out.data() + kHeader + name_len, c.code.data(), c.code.size());
  return out;
}

struct Unpacked {
  std::string symbol;
  std::vector<std::uint8_t> code;  // a copy: the driver wants it aligned, and the caller's bytes may go
};

Unpacked unpack(std::span<const std::uint8_t> b, const std::string& what, const std::string& device) {
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::InvalidArgument,
                 "cannot load " + what + ": the " + std::to_string(b.size()) + " bytes are not a " + vendor::kRuntime +
                     " kernel built by this plugin (" + why + ")",
                 {.op = "load_kernel", .device = device}, {"Rebuild the kernel from its source"});
  };
  if (b.size() < kHeader || std::memcmp(b.data(), kMagic, 8) != 0) throw bad("no header");
  std::uint32_t name_len = 0;
  std::uint64_t code_len = 0, sum = 0;
  std::memcpy(&name_len, b.data() + 8, 4);
  std::memcpy(&code_len, b.data() + 16, 8);
  std::memcpy(&sum, b.data() + 24, 8);
  if (name_len == 0 || name_len > 4096 || code_len == 0 || code_len > b.size() ||
      kHeader + name_len + code_len != b.size())
    throw bad("sizes do not add up");
  Unpacked u;
  u.symbol.assign(reinterpret_cast<const char*>(b.data() + kHeader), name_len);
  const std::span<const std::uint8_t> code = b.subspan(kHeader + name_len);
  if (checksum(u.symbol, code) != sum) throw bad("checksum mismatch");
#if defined(TORSH_HIP)
  if (code.size() < 64 || std::memcmp(code.data(), "\x7f" "ELF", 4) != 0) throw bad("not an ELF code object");
#else
  // PTX is read up to its NUL: one at the end and none before.
  if (code.back() != 0 || std::memchr(code.data(), 0, code.size() - 1) != nullptr) throw bad("not PTX text");
#endif
  u.code.assign(code.begin(), code.end());
  return u;
}

class CudaUserKernel final : public rt::UserKernelImpl {
 public:
  CudaUserKernel(CudaDevice& dev, const rt::UserKernelSpec& spec, module_api::Module m, module_api::Function f)
      : dev_(dev), name_(spec.src.name.empty() ? spec.src.entry : spec.src.name), module_(m), fn_(f),
        params_(spec.params), known_(spec.params_known) {
    fn_max_threads_ = module_api::max_threads_per_block(f);
    refine(module_api::param_sizes(f));
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
        pointers[i] = bytes_of(*a.tensor->buffer) + a.tensor->offset * static_cast<std::int64_t>(dtype_size(a.tensor->dtype));
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
    const std::string launch = "grid " + grid.to_string() + " x block " + block.to_string();
    const char* axis[3] = {"x", "y", "z"};
    const std::uint32_t b[3] = {block.x, block.y, block.z}, g[3] = {grid.x, grid.y, grid.z};
    const std::string smaller = "Use blocks of at most " + std::to_string(l.threads_per_block) +
                                " threads (256 is a good start) and more blocks";
    for (int d = 0; d < 3; ++d) {
      if (b[d] > static_cast<std::uint32_t>(l.block[d]))
        refuse(launch + ": block." + axis[d] + " = " + std::to_string(b[d]) + " exceeds the device's limit of " +
                   std::to_string(l.block[d]) + " (maxThreadsDim[" + std::to_string(d) + "])",
               smaller);
      if (g[d] > static_cast<std::uint32_t>(l.grid[d]))
        refuse(launch + ": grid." + axis[d] + " = " + std::to_string(g[d]) + " exceeds the device's limit of " +
                   std::to_string(l.grid[d]) + " (maxGridSize[" + std::to_string(d) + "])",
               "Put the excess on another grid dimension, or loop inside the kernel (grid-stride)");
    }
    if (block.volume() > static_cast<std::uint64_t>(l.threads_per_block))
      refuse(launch + ": a block of " + std::to_string(block.volume()) + " threads exceeds the device's limit of " +
                 std::to_string(l.threads_per_block) + " (maxThreadsPerBlock)",
             smaller);
    if (fn_max_threads_ > 0 && block.volume() > static_cast<std::uint64_t>(fn_max_threads_))
      refuse(launch + ": a block of " + std::to_string(block.volume()) + " threads exceeds this kernel's limit of " +
                 std::to_string(fn_max_threads_) + " (its registers or shared memory allow no more)",
             "Use blocks of at most " + std::to_string(fn_max_threads_) + " threads");
    if (grid.volume() > std::numeric_limits<std::uint64_t>::max() / block.volume())
      refuse(launch + ": the total number of threads overflows 64 bits", "Launch fewer threads");
  }

  // The driver's parameter sizes are the truth: a value's parsed size is
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
  b.bytes = pack(c);
  b.log = std::move(c.log);
  return b;
}

std::unique_ptr<rt::UserKernelImpl> CudaDevice::load_kernel(const rt::UserKernelSpec& spec,
                                                            std::span<const std::uint8_t> binary) {
  const std::string what = what_of(spec);
  const Unpacked u = unpack(binary, what, label_);
  DeviceGuard g(ordinal_, label_);
  module_api::Module m = module_api::load(u.code.data(), what, label_);
  try {
    module_api::Function f = module_api::function(m, u.symbol, what, label_);
    return std::make_unique<CudaUserKernel>(*this, spec, m, f);
  } catch (...) {
    module_api::unload(m);
    throw;
  }
}

}  // namespace torsh::cuda
