#pragma once
// CLBlast's GEMM (SGEMM, HGEMM) on the stream's queue, for matmul.cpp: one of
// the candidates the GEMM tuner measures, and without tuning the implementation
// of the f32 shapes where it beat matmul.kern.h on the devices measured
// (BENCHMARKS.md). Built only when CMake found CLBlast (TORSH_HAVE_CLBLAST);
// otherwise nothing fits and matmul.kern.h runs everything. TORSH_OPENCL_CLBLAST=0
// in the environment leaves CLBlast out as if it were not built in (the
// benchmark scripts/bench/opencl-gemm-clblast.cpp compares the two that way).
#include "device.hpp"
#include "torsh/backend/op_args.hpp"

namespace torsh::opencl {

// Whether CLBlast is built in and takes this dtype on the device (f32; f16
// with cl_khr_fp16), and has not failed on it before.
bool clblast_available(OpenClDevice& dev, DType t);
// Whether CLBlast can run this matmul as it is: an available dtype, k > 0,
// each operand row- or column-major (a transpose) with a leading dimension
// covering it, out row-major, batch strides positive where there are
// several batches, and no graph capture in progress (CLBlast enqueues on
// its own, out of the capture's reach).
bool clblast_fits(OpenClStream& s, const rt::MatmulArgs& a);
// Without auto-tuning: whether this shape goes to CLBlast (measured on PoCL).
bool clblast_preferred(const rt::MatmulArgs& a);
// Runs the matmul with CLBlast; false (nothing enqueued) when it does not fit
// or CLBlast refused it, which is then remembered for the device and dtype.
bool clblast_gemm(OpenClStream& s, const rt::MatmulArgs& a);

}  // namespace torsh::opencl
