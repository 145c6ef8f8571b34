// A loaded CPU kernel: the shared object from build_kernel's bytes, opened
// from an in-memory file, and its launch over the thread pool.
#include "user_kernel.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <mutex>
#include <vector>

#include "../platform/thread_pool.hpp"
#include "kernel_abi.hpp"
#include "torsh/core/error.hpp"
#include "work_group_fibers.hpp"

namespace torsh::cpu::uk {

namespace {

const char* const kDevice = "cpu:0";

bool write_all(int fd, std::span<const std::uint8_t> b) {
  while (!b.empty()) {
    const ssize_t n = write(fd, b.data(), b.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    b = b.subspan(static_cast<std::size_t>(n));
  }
  return true;
}

// The dynamic loader hands back an object already loaded under the same file
// name, and /proc/self/fd/N names repeat once a descriptor is closed: a name
// an earlier kernel still holds is skipped by taking another descriptor
// number. The mapping keeps the memfd's contents alive after it is closed.
void* open_shared_object(std::span<const std::uint8_t> so, const std::string& kernel) {
  auto fail = [&](const std::string& why) -> void* {
    throw Error(ErrorCode::InvalidArgument, "the binary of kernel '" + kernel + "' cannot be loaded: " + why,
                {.op = kernel, .device = kDevice}, {"Rebuild the kernel from its source"});
  };
  int fd = memfd_create("torsh-cpu-kernel", MFD_CLOEXEC);
  std::string path, temp;
  if (fd >= 0 && access("/proc/self/fd", X_OK) == 0) {
    path = "/proc/self/fd/" + std::to_string(fd);
  } else {
    if (fd >= 0) close(fd);
    const char* base = std::getenv("TMPDIR");
    temp = std::string(base && *base ? base : "/tmp") + "/torsh-cpu-kernel-XXXXXX.so";
    fd = mkstemps(temp.data(), 3);
    if (fd < 0) return fail(std::string("no memfd and no temporary file: ") + std::strerror(errno));
    path = temp;
  }
  std::vector<int> fds{fd};
  struct Cleanup {
    std::vector<int>& fds;
    const std::string& temp;
    ~Cleanup() {
      for (int f : fds) close(f);
      if (!temp.empty()) unlink(temp.c_str());
    }
  } cleanup{fds, temp};
  if (!write_all(fd, so)) return fail(std::string("writing it out: ") + std::strerror(errno));
  for (int tries = 0; tries < 64; ++tries) {
    void* old = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!old) break;
    dlclose(old);
    const int again = fcntl(fds.back(), F_DUPFD_CLOEXEC, 0);
    if (again < 0) break;
    fds.push_back(again);
    path = "/proc/self/fd/" + std::to_string(again);
  }
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    return fail(e ? e : "dlopen failed");
  }
  return handle;
}

ParamType param_type_of(unsigned char code) {
  return code <= static_cast<unsigned char>(ParamType::Struct) ? static_cast<ParamType>(code) : ParamType::Unknown;
}

std::string spelling_of(const ParamInfo& p) {
  const ParamType t = param_type_of(p.type);
  std::string s(p.pointer && t == ParamType::Unknown ? "void" : param_type_name(t));
  if (p.pointer) s = (p.writable ? "" : "const ") + s + "*";
  return s;
}

// BARRIER() in a kernel run as a plain loop: only a one-item group can take
// it; anything else means the source scan missed the barrier.
void barrier_single_item(Item*) {}
void barrier_unexpected(Item*) {
  throw Error(ErrorCode::InvalidArgument,
              "a kernel reached BARRIER() although its source was not seen to use it (is the name built by "
              "token pasting?)",
              {.op = "launch", .device = kDevice}, {"Write BARRIER() literally in the kernel's source"});
}

std::string dims(const Dim3& d) { return d.to_string(); }

class CpuUserKernel final : public rt::UserKernelImpl {
 public:
  CpuUserKernel(const rt::UserKernelSpec& spec, std::span<const std::uint8_t> bytes)
      : name_(kernel_name(spec)), barriers_(uses_barriers(spec)) {
    const auto so = unseal(bytes, name_);
    handle_ = open_shared_object(so, name_);
    try {
      bind(spec);
    } catch (...) {
      release();
      throw;
    }
  }
  ~CpuUserKernel() override { release(); }

  const std::vector<KernelParam>& params() const override { return params_; }
  bool params_known() const override { return true; }

  void launch(rt::StreamImpl&, const Dim3& grid, const Dim3& block, std::span<const rt::LaunchArg> args) override {
    check_geometry(grid, block);
    std::vector<void*> argv = bind_args(args);
    Item geo{};
    const std::uint32_t b[3] = {block.x, block.y, block.z}, g[3] = {grid.x, grid.y, grid.z};
    for (int d = 0; d < 3; ++d) {
      geo.local_size[d] = b[d];
      geo.num_groups[d] = g[d];
    }
    const long volume = static_cast<long>(block.volume());
    const long groups = static_cast<long>(g[0]) * g[1] * g[2];
    std::atomic<bool> abort{false};
    std::exception_ptr first_error;
    std::mutex error_mu;
    // Pool workers must never let an exception escape (that terminates).
    auto guarded = [&](auto&& body) {
      try {
        body();
      } catch (...) {
        std::lock_guard lk(error_mu);
        if (!first_error) first_error = std::current_exception();
        abort = true;
      }
    };
    if (!barriers_ || volume == 1) {
      geo.barrier = volume == 1 ? &barrier_single_item : &barrier_unexpected;
      // A chunk of groups worth ~16K items per task: smaller work is not worth a wake-up.
      const long grain = std::max<long>(1, (1 << 14) / volume);
      pool().parallel_for(groups, grain, [&](std::int64_t begin, std::int64_t end) {
        guarded([&] {
          if (abort.load(std::memory_order_relaxed)) return;
          Item it = geo;
          run_groups_(argv.data(), &it, static_cast<long>(begin), static_cast<long>(end));
        });
      });
    } else {
      BarrierLaunch l;
      l.run = run_item_;
      l.args = argv.data();
      l.geometry = geo;
      l.kernel = name_;
      l.device = kDevice;
      l.abort = &abort;
      // Groups are claimed one at a time (they may differ in cost) by at most
      // as many tasks as the stack budget has room for.
      std::atomic<long> next{0};
      const auto tasks =
          std::min<std::size_t>({static_cast<std::size_t>(pool().size()), static_cast<std::size_t>(groups),
                                 max_concurrent_groups(static_cast<std::size_t>(volume))});
      pool().run(static_cast<int>(tasks), [&](int) { guarded([&] { run_groups_with_barriers(l, next, groups); }); });
    }
    if (first_error) rethrow_as_error(first_error);
  }

 private:
  void release() {
    if (handle_) dlclose(handle_);
    handle_ = nullptr;
  }

  template <class F>
  F symbol(const char* s) {
    void* p = dlsym(handle_, s);
    if (!p)
      throw Error(ErrorCode::InvalidArgument,
                  "the binary of kernel '" + name_ + "' lacks " + s + ": it was not built by this CPU backend",
                  {.op = name_, .device = kDevice}, {"Rebuild the kernel from its source"});
    return reinterpret_cast<F>(p);
  }

  // The entry's parameters as the compiler saw them refine the runtime's
  // parse: kinds, types and sizes from the binary, names from the parse.
  void bind(const rt::UserKernelSpec& spec) {
    const unsigned abi = symbol<AbiVersionFn>(kAbiVersionSymbol)();
    if (abi != kAbiVersion)
      throw Error(ErrorCode::InvalidArgument,
                  "the binary of kernel '" + name_ + "' has CPU kernel ABI " + std::to_string(abi) + ", this build " +
                      std::to_string(kAbiVersion),
                  {.op = name_, .device = kDevice}, {"Rebuild the kernel from its source"});
    run_groups_ = symbol<RunGroupsFn>(kRunGroupsSymbol);
    run_item_ = symbol<RunItemFn>(kRunItemSymbol);
    const ParamInfo* table = nullptr;
    const std::size_t n = symbol<SignatureFn>(kSignatureSymbol)(&table);
    const bool names = spec.params.size() == n;
    for (std::size_t i = 0; i < n; ++i) {
      const ParamInfo& p = table[i];
      KernelParam k;
      if (names) k = spec.params[i];
      k.kind = p.pointer ? KernelParam::Kind::Buffer : KernelParam::Kind::Value;
      k.type = param_type_of(p.type);
      k.size = p.size;
      k.writable = !p.pointer || p.writable;
      if (k.spelling.empty()) k.spelling = spelling_of(p);
      params_.push_back(std::move(k));
    }
  }

  [[noreturn]] void refuse(const std::string& what, std::vector<std::string> fix) const {
    throw Error(ErrorCode::InvalidArgument, "kernel '" + name_ + "': " + what, {.op = name_, .device = kDevice},
                std::move(fix));
  }

  void check_geometry(const Dim3& grid, const Dim3& block) const {
    // Messages are formatted only when a check fails.
    const auto given = [&] { return " (grid " + dims(grid) + ", block " + dims(block) + ")"; };
    // Per dimension: three 32-bit sizes can multiply to 0 in 64 bits.
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
      refuse("a launch dimension is zero" + given(), {});
    if (block.x > kMaxWorkGroup || block.y > kMaxWorkGroup || block.z > kMaxWorkGroup || block.volume() > kMaxWorkGroup)
      refuse("a work-group of " + std::to_string(block.volume()) + " items" + given() +
                 " is over the CPU backend's limit of " + std::to_string(kMaxWorkGroup) + " items on " + kDevice,
             {"Use a block of at most " + std::to_string(kMaxWorkGroup) + " items and more work-groups (grid)"});
    const unsigned __int128 items = static_cast<unsigned __int128>(grid.x) * grid.y * grid.z * block.volume();
    if (items > static_cast<unsigned __int128>(INT64_MAX))
      refuse("the launch" + given() + " has more work-items than GLOBAL_ID can number (2^63 - 1) on " +
                 std::string(kDevice),
             {"Launch fewer work-groups and loop inside the kernel"});
  }

  std::vector<void*> bind_args(std::span<const rt::LaunchArg> args) const {
    if (args.size() != params_.size())
      refuse("takes " + std::to_string(params_.size()) + " arguments, " + std::to_string(args.size()) + " given", {});
    std::vector<void*> out(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const KernelParam& p = params_[i];
      const rt::LaunchArg& a = args[i];
      const auto which = [&] { return "argument " + std::to_string(i) + " (" + p.to_string() + ")"; };
      if (p.kind == KernelParam::Kind::Buffer) {
        if (!a.tensor || !a.tensor->buffer) refuse(which() + " takes a tensor", {});
        auto* base = static_cast<char*>(a.tensor->buffer->host_ptr());
        if (!base) refuse(which() + ": the tensor's memory is not on the host", {"Move the tensor to the CPU backend"});
        out[i] = base + a.tensor->offset * static_cast<std::int64_t>(dtype_size(a.tensor->dtype));
      } else {
        if (a.tensor || !a.data) refuse(which() + " takes a value, not a tensor", {});
        if (a.size != p.size)
          refuse(which() + " is " + std::to_string(p.size) + " bytes, " + std::to_string(a.size) + " given", {});
        out[i] = const_cast<void*>(a.data);
      }
    }
    return out;
  }

  [[noreturn]] void rethrow_as_error(std::exception_ptr e) const {
    try {
      std::rethrow_exception(e);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& x) {
      throw Error(ErrorCode::InvalidArgument, "kernel '" + name_ + "' threw: " + x.what(),
                  {.op = name_, .device = kDevice});
    } catch (...) {
      throw Error(ErrorCode::InvalidArgument, "kernel '" + name_ + "' threw an exception that is not a std::exception",
                  {.op = name_, .device = kDevice});
    }
  }

  std::string name_;
  bool barriers_ = false;
  void* handle_ = nullptr;
  RunGroupsFn run_groups_ = nullptr;
  RunItemFn run_item_ = nullptr;
  std::vector<KernelParam> params_;
};

}  // namespace

std::unique_ptr<rt::UserKernelImpl> load_kernel(const rt::UserKernelSpec& spec, std::span<const std::uint8_t> bytes) {
  return std::make_unique<CpuUserKernel>(spec, bytes);
}

}  // namespace torsh::cpu::uk
