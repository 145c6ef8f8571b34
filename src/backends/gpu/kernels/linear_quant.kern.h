/* int8 quantization with ONNX's QuantizeLinear / DequantizeLinear semantics,
 * as the CPU backend's linear_quant.cpp (rt::LinearQuantArgs): x and out
 * contiguous from their element offsets, n elements; element i belongs to
 * channel (i / inner) % channels, whose f32 scale and (when has_zp) zero point
 * (U8 or I8, qdt) it uses. The floating side (fdt) is f32, f16 or bf16, with
 * math in f32: x / scale is correctly rounded on CUDA, HIP and PoCL (an
 * OpenCL GPU driver may use a 2.5-ulp division unless built with
 * -cl-fp32-correctly-rounded-divide-sqrt), and rint rounds half to even.
 * Grid-stride. */

DEVICE_FN float linear_quant_zero(GLOBAL const uchar* zp, long zoff, int has_zp, long c, int qdt) {
  return has_zp ? (float)load_int(zp, zoff + c, qdt) : 0.0f;
}

/* saturate(rint(x / scale) + zero_point); NaN gives the zero point. */
KERNEL void quantize_linear_elems(GLOBAL const uchar* x, long xoff, int fdt, GLOBAL const float* scale, long soff,
                                  GLOBAL const uchar* zp, long zoff, int has_zp, GLOBAL uchar* out, long ooff, int qdt,
                                  long n, long channels, long inner) {
  const float lo = qdt == ELEM_U8 ? 0.0f : -128.0f, hi = qdt == ELEM_U8 ? 255.0f : 127.0f;
  for (long i = GLOBAL_ID0(); i < n; i += GLOBAL_SIZE0()) {
    const long c = (i / inner) % channels;
    const float z = linear_quant_zero(zp, zoff, has_zp, c, qdt);
    float q = rint(load_elem(x, xoff + i, fdt) / scale[soff + c]) + z;
    q = q != q ? z : q < lo ? lo : q > hi ? hi : q;
    out[ooff + i] = (uchar)(int)q; /* an I8 level's two's complement byte */
  }
}

/* (x - zero_point) * scale in f32, stored as fdt. */
KERNEL void dequantize_linear_elems(GLOBAL const uchar* x, long xoff, int qdt, GLOBAL const float* scale, long soff,
                                    GLOBAL const uchar* zp, long zoff, int has_zp, GLOBAL uchar* out, long ooff,
                                    int fdt, long n, long channels, long inner) {
  for (long i = GLOBAL_ID0(); i < n; i += GLOBAL_SIZE0()) {
    const long c = (i / inner) % channels;
    const float v = ((float)load_int(x, xoff + i, qdt) - linear_quant_zero(zp, zoff, has_zp, c, qdt)) * scale[soff + c];
    store_elem(out, ooff + i, fdt, v);
  }
}
