// index_select (torch.index_select, numpy.take along an axis) and the dense
// embedding built on it. Kernels see x and out contiguous as [outer, n, inner]
// and [outer, m, inner] and move elements as bytes, so every dtype is one path.
#include <string>
#include <vector>

#include "dispatch.hpp"

namespace torsh::ops {
namespace {

void check_ids(const char* op, const Tensor& x, const Tensor& ids, std::int64_t axis, std::int64_t bound) {
  if (const auto bad = detail::first_id_outside(ids, bound))
    throw Error(ErrorCode::OutOfRange,
                "id " + std::to_string(bad->second) + " at position " + std::to_string(bad->first) +
                    " is outside [0, " + std::to_string(bound) + ") for axis " + std::to_string(axis) + " of x " +
                    x.describe(),
                detail::context(op, {x, ids}),
                {"Ids index dimension " + std::to_string(axis) + " of x; negative ids are not wrapped"});
}

Tensor select(const char* op, const Tensor& x_in, std::int64_t axis_in, const Tensor& ids_in) {
  if (!x_in.defined() || !ids_in.defined())
    throw Error(ErrorCode::InvalidState, "an operand is an undefined tensor", {.op = op});
  detail::check_same_device(op, {x_in, ids_in});
  if (ids_in.dtype() != DType::I32 && ids_in.dtype() != DType::I64)
    throw Error(ErrorCode::DTypeMismatch, std::string(op) + " takes i32 or i64 ids, got " + ids_in.describe(),
                detail::context(op, {x_in, ids_in}), {"Cast the ids with .cast(DType::I64)"});
  const auto nd = static_cast<std::int64_t>(x_in.ndim());
  if (axis_in < -nd || axis_in >= nd || nd == 0)
    throw Error(ErrorCode::OutOfRange,
                "axis " + std::to_string(axis_in) + " is outside [" + std::to_string(-nd) + ", " + std::to_string(nd) +
                    ") for x " + x_in.describe(),
                detail::context(op, {x_in, ids_in}),
                {nd == 0 ? "x must have at least one dimension" : "Negative axes count from the end"});
  const std::int64_t axis = axis_in < 0 ? axis_in + nd : axis_in;
  const std::int64_t n = x_in.shape()[static_cast<std::size_t>(axis)];
  check_ids(op, x_in, ids_in, axis, n);

  const std::int64_t m = ids_in.numel();
  std::vector<std::int64_t> dims = x_in.shape().dims();
  dims[static_cast<std::size_t>(axis)] = m;
  Tensor out = detail::empty_like(x_in, Shape(dims), x_in.dtype());
  if (out.numel() == 0) return out;

  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= dims[static_cast<std::size_t>(d)];
  for (std::int64_t d = axis + 1; d < nd; ++d) inner *= dims[static_cast<std::size_t>(d)];
  const Tensor x = x_in.contiguous();
  const Tensor ids = ids_in.contiguous().reshape({m});
  rt::IndexSelectArgs proto;
  proto.outer = outer;
  proto.n = n;
  proto.inner = inner;
  proto.m = m;
  detail::launch<rt::OpKind::IndexSelect>(op, {x, ids}, {out}, [proto](auto& in, auto& o) {
    rt::IndexSelectArgs a = proto;
    a.x = in[0];
    a.ids = in[1];
    a.out = o[0];
    return a;
  });
  return out;
}

}  // namespace

Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& ids) {
  return select("index_select", x, axis, ids);
}

Tensor embedding(const Tensor& table, const Tensor& ids) {
  const char* op = "embedding";
  if (table.defined() && table.ndim() != 2)
    throw Error(ErrorCode::ShapeMismatch, "embedding takes a [V, D] table, got " + table.describe(),
                ids.defined() ? detail::context(op, {table, ids}) : detail::context(op, {table}),
                {"Reshape the table to [rows, features]"});
  Tensor rows = select(op, table, 0, ids);
  std::vector<std::int64_t> dims = ids.shape().dims();
  dims.push_back(table.shape()[1]);
  return rows.reshape(dims);
}

}  // namespace torsh::ops
