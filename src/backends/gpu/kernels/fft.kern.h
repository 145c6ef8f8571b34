/* FFT passes for rt::FftArgs (OpKind::Fft), driven by
 * src/backends/gpu/fft_passes.hpp. Complex values are (re, im) pairs; the
 * work arrays hold `lines` rows of n (or Bluestein's m) pairs, contiguous.
 *   fft_gather: x in its [outer, len, inner] layout -> rows (a real input
 *     gets zero imaginary parts; a Hermitian half is extended by symmetry,
 *     dropping the imaginary parts a real signal's spectrum cannot have);
 *   fft_stage: one Stockham stage of radix 2, 3, 4, 5, 7 or 8 (decimation in
 *     frequency, natural order after the last), sign -1 forward, +1 inverse;
 *     twiddles from sin / cos of the angle reduced in integers;
 *   fft_scatter: rows -> out in its layout, scaled (the first n / 2 + 1
 *     values of a real input's spectrum; the real part for C2R);
 *   fft_chirp_*: Bluestein's steps for lengths with other prime factors.
 * One work-item per element or butterfly, grid-stride.
 * fft_*_f32; fft_*_f64 where the device has doubles. */

#define FFT_PI 3.14159265358979323846

/* Value t of line (o, i) of x into re, im: C2C reads the pair, R2C the real
 * value (im 0), C2R the Hermitian extension of the half spectrum (dropping
 * the imaginary parts a real signal's spectrum cannot have). */
#define FFT_LOAD(t)                                               \
  if (kind == 1) {                                                \
    re = x[xoff + (o * len_x + (t)) * inner + i];                 \
    im = 0;                                                       \
  } else if (kind == 2) {                                         \
    const long k_ = 2 * (t) <= n ? (t) : n - (t);                 \
    const long src_ = xoff + ((o * len_x + k_) * inner + i) * 2;  \
    re = x[src_];                                                 \
    im = (k_ == 0 || 2 * k_ == n) ? 0 : x[src_ + 1];              \
    if (k_ != (t)) im = -im;                                      \
  } else {                                                        \
    const long src_ = xoff + ((o * len_x + (t)) * inner + i) * 2; \
    re = x[src_];                                                 \
    im = x[src_ + 1];                                             \
  }

/* The radix-r butterfly (p, q) of a stage of length len, stride s, from
 * rows XL into rows YL (pointer expressions of any address space). */
#define FFT_BUTTERFLY(T, S, XL, YL)                                                               \
  {                                                                                               \
    T ar[8], ai[8], br[8], bi[8];                                                                 \
    for (int j = 0; j < r; ++j) {                                                                 \
      const long at = 2 * (q + s * (p + j * m));                                                  \
      ar[j] = (XL)[at];                                                                           \
      ai[j] = (XL)[at + 1];                                                                       \
    }                                                                                             \
    if (r == 2) {                                                                                 \
      br[0] = ar[0] + ar[1], bi[0] = ai[0] + ai[1];                                               \
      br[1] = ar[0] - ar[1], bi[1] = ai[0] - ai[1];                                               \
    } else if (r == 4) {                                                                          \
      const T t0r = ar[0] + ar[2], t0i = ai[0] + ai[2], t1r = ar[0] - ar[2], t1i = ai[0] - ai[2]; \
      const T t2r = ar[1] + ar[3], t2i = ai[1] + ai[3];                                           \
      const T t3r = -(T)sign * (ai[1] - ai[3]), t3i = (T)sign * (ar[1] - ar[3]);                  \
      br[0] = t0r + t2r, bi[0] = t0i + t2i;                                                       \
      br[2] = t0r - t2r, bi[2] = t0i - t2i;                                                       \
      br[1] = t1r + t3r, bi[1] = t1i + t3i;                                                       \
      br[3] = t1r - t3r, bi[3] = t1i - t3i;                                                       \
    } else {                                                                                      \
      T wr[8], wi[8];                                                                             \
      for (int k = 0; k < r; ++k) fft_root_##S(k, r, sign, &wr[k], &wi[k]);                       \
      for (int k = 0; k < r; ++k) {                                                               \
        T sr = (T)0, si = (T)0;                                                                   \
        int jk = 0;                                                                               \
        for (int j = 0; j < r; ++j) {                                                             \
          sr += ar[j] * wr[jk] - ai[j] * wi[jk];                                                  \
          si += ar[j] * wi[jk] + ai[j] * wr[jk];                                                  \
          jk += k;                                                                                \
          if (jk >= r) jk -= r;                                                                   \
        }                                                                                         \
        br[k] = sr, bi[k] = si;                                                                   \
      }                                                                                           \
    }                                                                                             \
    const long out_ = 2 * (q + s * r * p);                                                        \
    (YL)[out_] = br[0];                                                                           \
    (YL)[out_ + 1] = bi[0];                                                                       \
    for (int k = 1; k < r; ++k) {                                                                 \
      T wr, wi;                                                                                   \
      fft_root_##S(p* k, len, sign, &wr, &wi);                                                    \
      (YL)[out_ + 2 * s * k] = br[k] * wr - bi[k] * wi;                                           \
      (YL)[out_ + 2 * s * k + 1] = br[k] * wi + bi[k] * wr;                                       \
    }                                                                                             \
  }

/* LOCAL: T values per local buffer of fft_local (two buffers). */
#define FFT_DEFINE(T, S, LOCAL)                                                                                      \
  /* exp(sign 2 pi i num / den), num reduced first. */                                                               \
  DEVICE_FN void fft_root_##S(long num, long den, int sign, T* re, T* im) {                                          \
    const T a = (T)(sign * 2) * (T)FFT_PI * (T)(num % den) / (T)den;                                                 \
    *re = cos(a);                                                                                                    \
    *im = sin(a);                                                                                                    \
  }                                                                                                                  \
                                                                                                                     \
  KERNEL void fft_gather_##S(GLOBAL const T* x, long xoff, GLOBAL T* a, long lines, long n, long inner, int kind,    \
                             long len_x) {                                                                           \
    for (long e = GLOBAL_ID0(); e < lines * n; e += GLOBAL_SIZE0()) {                                                \
      const long l = e / n, t = e - l * n, o = l / inner, i = l - o * inner;                                         \
      T re, im;                                                                                                      \
      FFT_LOAD(t)                                                                                                    \
      a[2 * e] = re;                                                                                                 \
      a[2 * e + 1] = im;                                                                                             \
    }                                                                                                                \
  }                                                                                                                  \
                                                                                                                     \
  /* y[q + s (r p + k)] = w_len^(sign p k) sum_j x[q + s (p + j m)] w_r^(sign j k), m = len / r. */                  \
  KERNEL void fft_stage_##S(GLOBAL const T* x, GLOBAL T* y, long lines, long n, long len, long s, int r, int sign) { \
    const long m = len / r, per_line = m * s;                                                                        \
    for (long e = GLOBAL_ID0(); e < lines * per_line; e += GLOBAL_SIZE0()) {                                         \
      const long l = e / per_line, rem = e - l * per_line, p = rem / s, q = rem - p * s;                             \
      FFT_BUTTERFLY(T, S, x + 2 * l * n, y + 2 * l * n)                                                              \
    }                                                                                                                \
  }                                                                                                                  \
                                                                                                                     \
  /* One work-group per line, every stage in local memory (n <= LOCAL / 2): gather as fft_gather, the stages of      \
   * `radices` (4 bits each, the first stage's in the low bits), scatter as fft_scatter. One launch instead of       \
   * one per stage, and one pass over global memory each way. */                                                     \
  KERNEL void fft_local_##S(GLOBAL const T* x, long xoff, GLOBAL T* out, long ooff, long lines, long n, long inner,  \
                            int kind, long len_x, long len_out, int radices, int sign, T scale) {                    \
    LOCAL_ARRAY(T, fa, LOCAL);                                                                                       \
    LOCAL_ARRAY(T, fb, LOCAL);                                                                                       \
    for (long l = GROUP_ID(0); l < lines; l += NUM_GROUPS(0)) {                                                      \
      const long o = l / inner, i = l - o * inner;                                                                   \
      for (long t = LOCAL_ID(0); t < n; t += LOCAL_SIZE(0)) {                                                        \
        T re, im;                                                                                                    \
        FFT_LOAD(t)                                                                                                  \
        fa[2 * t] = re;                                                                                              \
        fa[2 * t + 1] = im;                                                                                          \
      }                                                                                                              \
      BARRIER();                                                                                                     \
      LOCAL_PTR(T) from = fa;                                                                                        \
      LOCAL_PTR(T) to = fb;                                                                                          \
      long len = n;                                                                                                  \
      int rs = radices;                                                                                              \
      while (len > 1) {                                                                                              \
        const int r = rs & 15;                                                                                       \
        rs >>= 4;                                                                                                    \
        const long m = len / r, s = n / len;                                                                         \
        for (long b = LOCAL_ID(0); b < m * s; b += LOCAL_SIZE(0)) {                                                  \
          const long p = b / s, q = b - p * s;                                                                       \
          FFT_BUTTERFLY(T, S, from, to)                                                                              \
        }                                                                                                            \
        BARRIER();                                                                                                   \
        LOCAL_PTR(T) tmp = from;                                                                                     \
        from = to;                                                                                                   \
        to = tmp;                                                                                                    \
        len = m;                                                                                                     \
      }                                                                                                              \
      for (long k = LOCAL_ID(0); k < len_out; k += LOCAL_SIZE(0)) {                                                  \
        if (kind == 2) {                                                                                             \
          out[ooff + (o * len_out + k) * inner + i] = from[2 * k] * scale;                                           \
        } else {                                                                                                     \
          const long dst = ooff + ((o * len_out + k) * inner + i) * 2;                                               \
          out[dst] = from[2 * k] * scale;                                                                            \
          out[dst + 1] = from[2 * k + 1] * scale;                                                                    \
        }                                                                                                            \
      }                                                                                                              \
      BARRIER();                                                                                                     \
    }                                                                                                                \
  }                                                                                                                  \
                                                                                                                     \
  KERNEL void fft_scatter_##S(GLOBAL const T* a, GLOBAL T* out, long ooff, long lines, long n, long inner, int kind, \
                              long len_out, T scale) {                                                               \
    for (long e = GLOBAL_ID0(); e < lines * len_out; e += GLOBAL_SIZE0()) {                                          \
      const long l = e / len_out, k = e - l * len_out, o = l / inner, i = l - o * inner;                             \
      const long src = 2 * (l * n + k);                                                                              \
      if (kind == 2) {                                                                                               \
        out[ooff + (o * len_out + k) * inner + i] = a[src] * scale;                                                  \
      } else {                                                                                                       \
        const long dst = ooff + ((o * len_out + k) * inner + i) * 2;                                                 \
        out[dst] = a[src] * scale;                                                                                   \
        out[dst + 1] = a[src + 1] * scale;                                                                           \
      }                                                                                                              \
    }                                                                                                                \
  }                                                                                                                  \
                                                                                                                     \
  /* Bluestein, chirp c_k = exp(sign i pi k^2 / n) (k^2 mod 2n in integers):                                         \
   * mode 0: p[l][k] = a[l][k] c_k for k < n, 0 up to m;                                                             \
   * mode 1: p[0][k] = conj(c_k) at k and m - k (k < n), else 0 (the convolution kernel);                            \
   * mode 2: a[l][k] = p[l][k] c_k for k < n (after the convolution). */                                             \
  KERNEL void fft_chirp_##S(GLOBAL T* a, GLOBAL T* p, long lines, long n, long m, int sign, int mode) {              \
    const long rows = mode == 1 ? 1 : lines, cols = mode == 2 ? n : m;                                               \
    for (long e = GLOBAL_ID0(); e < rows * cols; e += GLOBAL_SIZE0()) {                                              \
      const long l = e / cols, k = e - l * cols;                                                                     \
      const long kk = mode == 1 && k >= n ? m - k : k;                                                               \
      T cr = (T)0, ci = (T)0;                                                                                        \
      if (kk < n) fft_root_##S((kk * kk) % (2 * n), 2 * n, sign, &cr, &ci);                                          \
      if (mode == 0) {                                                                                               \
        const T xr = k < n ? a[2 * (l * n + k)] : (T)0, xi = k < n ? a[2 * (l * n + k) + 1] : (T)0;                  \
        p[2 * (l * m + k)] = xr * cr - xi * ci;                                                                      \
        p[2 * (l * m + k) + 1] = xr * ci + xi * cr;                                                                  \
      } else if (mode == 1) {                                                                                        \
        p[2 * k] = kk < n ? cr : (T)0;                                                                               \
        p[2 * k + 1] = kk < n ? -ci : (T)0;                                                                          \
      } else {                                                                                                       \
        const T xr = p[2 * (l * m + k)], xi = p[2 * (l * m + k) + 1];                                                \
        a[2 * (l * n + k)] = xr * cr - xi * ci;                                                                      \
        a[2 * (l * n + k) + 1] = xr * ci + xi * cr;                                                                  \
      }                                                                                                              \
    }                                                                                                                \
  }                                                                                                                  \
                                                                                                                     \
  /* y[off .. off + count) *= scale (after a vendor transform, which does not scale). */                             \
  KERNEL void fft_scale_##S(GLOBAL T* y, long off, long count, T scale) {                                            \
    for (long e = GLOBAL_ID0(); e < count; e += GLOBAL_SIZE0()) y[off + e] *= scale;                                 \
  }                                                                                                                  \
                                                                                                                     \
  /* p[l][k] *= b[k] / m (the transformed kernel). */                                                                \
  KERNEL void fft_pointwise_##S(GLOBAL T* p, GLOBAL const T* b, long lines, long m) {                                \
    for (long e = GLOBAL_ID0(); e < lines * m; e += GLOBAL_SIZE0()) {                                                \
      const long k = e % m;                                                                                          \
      const T xr = p[2 * e], xi = p[2 * e + 1], inv = (T)1 / (T)m;                                                   \
      const T yr = b[2 * k] * inv, yi = b[2 * k + 1] * inv;                                                          \
      p[2 * e] = xr * yr - xi * yi;                                                                                  \
      p[2 * e + 1] = xr * yi + xi * yr;                                                                              \
    }                                                                                                                \
  }

FFT_DEFINE(float, f32, 2048)
#if defined(TORSH_FP64)
FFT_DEFINE(double, f64, 1024)
#endif
