// The Philox random generators: uniform, normal and Bernoulli draws.
#include "dispatch.hpp"

namespace torsh::ops {

namespace {
Tensor random_impl(rt::RandomKind kind, Backend& backend, const Shape& shape, std::uint64_t seed, DType dtype, float a,
                   float b, std::uint64_t offset) {
  const char* name = kind == rt::RandomKind::Uniform ? "rand" : kind == rt::RandomKind::Normal ? "randn" : "bernoulli";
  if (!is_floating(dtype))
    throw Error(ErrorCode::DTypeMismatch, std::string(name) + " produces floating dtypes", {.op = name},
                {"Generate f32 and cast"});
  if (kind == rt::RandomKind::Uniform && !(a < b))
    throw Error(ErrorCode::InvalidArgument, "rand needs low < high", {.op = name});
  if (kind == rt::RandomKind::Normal && !(b >= 0))
    throw Error(ErrorCode::InvalidArgument, "randn needs stddev >= 0", {.op = name});
  if (kind == rt::RandomKind::Bernoulli && !(a >= 0 && a <= 1))
    throw Error(ErrorCode::InvalidArgument, "bernoulli needs p in [0, 1]", {.op = name});
  Tensor out = backend.empty(shape, dtype);
  if (out.numel() == 0) return out;
  detail::launch<rt::OpKind::Random>(name, {}, {out}, [=](auto&, auto& o) {
    rt::RandomArgs r;
    r.kind = kind;
    r.out = o[0];
    r.seed = seed;
    r.offset = offset;
    r.a = a;
    r.b = b;
    return r;
  });
  return out;
}
}  // namespace

Tensor rand(Backend& backend, const Shape& shape, std::uint64_t seed, DType dtype, float low, float high,
            std::uint64_t offset) {
  return random_impl(rt::RandomKind::Uniform, backend, shape, seed, dtype, low, high, offset);
}
Tensor randn(Backend& backend, const Shape& shape, std::uint64_t seed, DType dtype, float mean, float stddev,
             std::uint64_t offset) {
  return random_impl(rt::RandomKind::Normal, backend, shape, seed, dtype, mean, stddev, offset);
}
Tensor bernoulli(Backend& backend, const Shape& shape, float p, std::uint64_t seed, DType dtype, std::uint64_t offset) {
  return random_impl(rt::RandomKind::Bernoulli, backend, shape, seed, dtype, p, 0.0f, offset);
}

}  // namespace torsh::ops
