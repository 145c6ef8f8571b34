#include "device.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "../../runtime/memory_pool_internal.hpp"
#include "../../runtime/registry_internal.hpp"
#include "platform/cpu_info.hpp"
#include "platform/host_alloc.hpp"
#include "platform/thread_pool.hpp"
#include "platform/tuning.hpp"
#include "simd/stream_store.hpp"
#include "torsh/runtime/autotune.hpp"
#include "user_kernel/user_kernel.hpp"

namespace torsh::cpu {

namespace {
constexpr std::size_t kAlign = 64;
}

namespace {
// Linux overcommits: a request that fits the machine's total memory but not
// what is free now succeeds, and the process is killed when its pages are
// first touched. Requests from this size on are checked against the memory
// available now; reading it (tens of microseconds) is small next to touching
// that much memory.
constexpr std::size_t kCheckAvailableFrom = std::size_t{64} << 20;

void check_available(std::size_t bytes) {
  if (bytes < kCheckAvailableFrom) return;
  const HostMemory mem = host_memory();
  if (mem.available == 0 || bytes <= mem.available) return;  // 0: /proc/meminfo unreadable, let malloc decide
  throw Error(ErrorCode::OutOfMemory,
              "requested " + detail::format_bytes(bytes) + " but only " + detail::format_bytes(mem.available) +
                  " of the host's " + detail::format_bytes(mem.total) + " is available now",
              {.op = "allocate", .device = "cpu:0"},
              {"Release tensors that are no longer needed, or split the work into smaller pieces"});
}
}  // namespace

CpuBuffer::CpuBuffer(std::size_t bytes) : size_(bytes) {
  check_available(bytes);
  const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  data_ = allocate_host(rounded);  // platform/host_alloc.hpp: huge pages from 16 MiB
  if (!data_)
    throw Error(ErrorCode::OutOfMemory, "host allocation of " + std::to_string(bytes) + " bytes failed",
                {.op = "allocate", .device = "cpu:0"});
}

CpuBuffer::~CpuBuffer() { std::free(data_); }

void CpuStream::record(rt::EventImpl& e) { static_cast<CpuEvent&>(e).when = std::chrono::steady_clock::now(); }

double CpuEvent::elapsed_ms(rt::EventImpl& later) {
  return std::chrono::duration<double, std::milli>(static_cast<CpuEvent&>(later).when - when).count();
}

CpuDevice::CpuDevice() : rt::DeviceImpl(kernel_table()), info_(query_host_cpu()) {
  // With auto-tuning on, the store kind is measured now (once per machine,
  // then read from the cache), so the variants below report the decision.
  if (autotune::enabled()) streaming_stores_win(stream_threshold_bytes());
  info_.kernel_variants = kernel_variants();
}

Capabilities CpuDevice::capabilities() const {
  Capabilities c;
  c.f16 = c.bf16 = c.f64 = true;
  c.async_copy = false;
  c.event_timing = true;
  c.unified_memory = true;
  c.max_allocation = info_.total_memory;
  c.runtime_kernels = true;
  c.kernel_dialects = kernel_dialects();
  c.max_work_group = uk::kMaxWorkGroup;
  return c;
}

PerformanceHints CpuDevice::hints() const {
  PerformanceHints h;
  h.alignment = kAlign;
  h.threads = pool().size();
  h.min_parallel_elements = 1 << 15;
  return h;
}

std::unique_ptr<rt::BufferImpl> CpuDevice::allocate(std::size_t bytes) { return std::make_unique<CpuBuffer>(bytes); }

void CpuDevice::write(rt::BufferImpl& dst, std::size_t off, const void* src, std::size_t n, rt::StreamImpl&, bool) {
  std::memcpy(static_cast<char*>(dst.host_ptr()) + off, src, n);
}

void CpuDevice::read(rt::BufferImpl& src, std::size_t off, void* dst, std::size_t n, rt::StreamImpl&, bool) {
  std::memcpy(dst, static_cast<const char*>(src.host_ptr()) + off, n);
}

void CpuDevice::copy(rt::BufferImpl& src, std::size_t soff, rt::BufferImpl& dst, std::size_t doff, std::size_t n,
                     rt::StreamImpl&) {
  std::memmove(static_cast<char*>(dst.host_ptr()) + doff, static_cast<const char*>(src.host_ptr()) + soff, n);
}

void CpuDevice::fill(rt::BufferImpl& dst, std::size_t off, std::size_t n, const void* pattern, std::size_t psize,
                     rt::StreamImpl&) {
  char* p = static_cast<char*>(dst.host_ptr()) + off;
  if (psize == 1) {
    std::memset(p, *static_cast<const unsigned char*>(pattern), n);
    return;
  }
  for (std::size_t i = 0; i < n; i += psize) std::memcpy(p + i, pattern, psize);
}

std::string CpuDevice::kernel_compiler_id() const { return uk::compiler_id(); }

rt::KernelBinary CpuDevice::build_kernel(const rt::UserKernelSpec& spec) { return uk::build_kernel(spec); }

std::unique_ptr<rt::UserKernelImpl> CpuDevice::load_kernel(const rt::UserKernelSpec& spec,
                                                           std::span<const std::uint8_t> binary) {
  return uk::load_kernel(spec, binary);
}

rt::KernelTable& kernel_table() {
  static rt::KernelTable t;
  return t;
}

namespace {
class CpuDriver final : public rt::Driver {
 public:
  BackendType type() const override { return BackendType::Cpu; }
  std::string version() const override { return "built-in, " + std::to_string(pool().size()) + " threads"; }
  int device_count() const override { return 1; }
  std::shared_ptr<rt::DeviceImpl> device(int) override { return dev_; }

 private:
  std::shared_ptr<CpuDevice> dev_ = std::make_shared<CpuDevice>();
};
}  // namespace

}  // namespace torsh::cpu

namespace torsh::rt {
std::shared_ptr<Driver> make_cpu_driver() { return std::make_shared<cpu::CpuDriver>(); }
void cpu_set_num_threads(DeviceImpl&, int threads) { cpu::set_pool_threads(threads); }
}  // namespace torsh::rt
