// The container around build_kernel's bytes (user_kernel.hpp): a header that
// names the compiler and checksums the payload, so that load_kernel hands a
// driver only what this driver built for this device.
#include <cstring>

#include "user_kernel.hpp"

namespace torsh::opencl {

namespace {

// FNV-1a: catches bytes cut short or flipped on disk; not a defence against forgery.
std::uint64_t fnv1a(std::span<const std::uint8_t> data) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::uint8_t b : data) h = (h ^ b) * 1099511628211ull;
  return h;
}

constexpr char kMagic[8] = {'T', 'O', 'R', 'S', 'H', 'C', 'L', '1'};
// magic, kind, payload size, payload checksum, checksum of kernel_compiler_id()
constexpr std::size_t kHeader = sizeof kMagic + 1 + 8 + 8 + 8;

}  // namespace

std::vector<std::uint8_t> pack_user_kernel(UserKernelBytes::Kind kind, std::span<const std::uint8_t> payload,
                                           const std::string& compiler_id) {
  std::vector<std::uint8_t> out(kHeader + payload.size());
  const std::uint64_t size = payload.size(), sum = fnv1a(payload), id = fnv1a(text_bytes(compiler_id));
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  out[sizeof kMagic] = static_cast<std::uint8_t>(kind);
  std::memcpy(out.data() + sizeof kMagic + 1, &size, 8);
  std::memcpy(out.data() + sizeof kMagic + 9, &sum, 8);
  std::memcpy(out.data() + sizeof kMagic + 17, &id, 8);
  if (!payload.empty()) std::memcpy(out.data() + kHeader, payload.data(), payload.size());
  return out;
}

UserKernelBytes unpack_user_kernel(std::span<const std::uint8_t> bytes, const std::string& compiler_id,
                                   const std::string& device) {
  const auto refuse = [&](const std::string& why) -> Error {
    return Error(ErrorCode::InvalidArgument, "not a usable OpenCL user-kernel binary: " + why,
                 {.op = "load_kernel", .device = device}, {"Rebuild the kernel from its source"});
  };
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw refuse("it does not start with the " + std::string(kMagic, sizeof kMagic) + " header (" +
                 std::to_string(bytes.size()) + " bytes)");
  UserKernelBytes out;
  const std::uint8_t kind = bytes[sizeof kMagic];
  if (kind != static_cast<std::uint8_t>(UserKernelBytes::Kind::Binary) &&
      kind != static_cast<std::uint8_t>(UserKernelBytes::Kind::Source))
    throw refuse("unknown payload kind " + std::to_string(kind));
  out.kind = static_cast<UserKernelBytes::Kind>(kind);
  std::uint64_t size = 0, sum = 0, id = 0;
  std::memcpy(&size, bytes.data() + sizeof kMagic + 1, 8);
  std::memcpy(&sum, bytes.data() + sizeof kMagic + 9, 8);
  std::memcpy(&id, bytes.data() + sizeof kMagic + 17, 8);
  if (id != fnv1a(text_bytes(compiler_id)))
    throw refuse("it was built by another OpenCL compiler, driver or device than " + compiler_id);
  if (size != bytes.size() - kHeader)
    throw refuse("the header announces " + std::to_string(size) + " bytes of payload but " +
                 std::to_string(bytes.size() - kHeader) + " follow (truncated or padded)");
  out.payload = bytes.subspan(kHeader);
  if (fnv1a(out.payload) != sum) throw refuse("the payload's checksum does not match (corrupted)");
  if (out.payload.empty()) throw refuse("the payload is empty");
  return out;
}

}  // namespace torsh::opencl
