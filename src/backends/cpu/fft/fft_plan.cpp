// Plans: the factorisation, the twiddles and Bluestein's chirp, built once
// per (length, dtype) and kept in a bounded cache.
#include <unistd.h>

#include <cmath>
#include <list>
#include <mutex>
#include <numbers>
#include <unordered_map>

#include "fft_plan.hpp"
#include "fft_vector.hpp"
#include "torsh/core/error.hpp"

namespace torsh::cpu::fft {
namespace {

// Radices in stage order. Powers of two as 8s with one or two 4s (or a 2)
// for the rest, and the largest radix first: the first stage runs with
// stride 1 (p innermost), every later one with stride >= 8, so its q loop
// fills a vector. With sixteens (VectorPlanShape) the 4 4 and the 8 8 4
// tails are 16 and 16 16 instead, first. Odd factors follow. Returns false
// when a prime factor is above kMaxGenericRadix (the length goes to Bluestein).
bool factor(std::int64_t n, std::vector<int>& radices, bool sixteens = false) {
  int e = 0;
  while (n % 2 == 0) n /= 2, ++e;
  std::vector<int> twos;
  if (sixteens && e % 3 == 1 && e >= 4)
    radices.push_back(16), e -= 4;
  else if (sixteens && e % 3 == 2 && e >= 8)
    radices.insert(radices.end(), {16, 16}), e -= 8;
  else if (e % 3 == 1 && e >= 4)
    twos = {4, 4}, e -= 4;
  else if (e % 3 == 1)
    twos = {2}, e -= 1;
  else if (e % 3 == 2)
    twos = {4}, e -= 2;
  for (; e > 0; e -= 3) radices.push_back(8);
  radices.insert(radices.end(), twos.begin(), twos.end());
  for (std::int64_t p = 3; n > 1; p += 2) {
    if (p * p > n) p = n;  // what is left is prime
    while (n % p == 0) {
      if (p > kMaxGenericRadix) return false;
      radices.push_back(static_cast<int>(p));
      n /= p;
    }
  }
  return true;
}

// exp(-2 pi i num / den) with num reduced mod den in integers first, so the
// angle passed to sin / cos stays within one turn.
void unit_root(std::int64_t num, std::int64_t den, double& re, double& im) {
  num %= den;
  const double a = -2.0 * std::numbers::pi * static_cast<double>(num) / static_cast<double>(den);
  re = std::cos(a), im = std::sin(a);
}

// Bluestein's plan for length n holds and computes arrays of m >= 2n - 1
// values (in double while its kernel is transformed): refused with an error
// before any of it is allocated when that passes half the machine's memory,
// instead of the process being killed on first touch.
void check_bluestein_memory(std::int64_t n, std::int64_t m) {
  const double need = static_cast<double>(m) * 80.0;  // double kernel + its plan + the plan's own arrays
  const double have = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (have > 0 && need > have / 2)
    throw Error(ErrorCode::OutOfMemory,
                "a transform of length " + std::to_string(n) +
                    " has a prime factor above 31, so it runs as a convolution of length " + std::to_string(m) +
                    " whose plan needs about " + std::to_string(static_cast<long long>(need / (1 << 20))) +
                    " MiB, more than half of this machine's memory",
                {.op = "fft"}, {"Pad the input to a length with small prime factors (n=...) or split the transform"});
}

std::int64_t next_pow2(std::int64_t v) {
  std::int64_t m = 1;
  while (m < v) m *= 2;
  return m;
}

// Plan::passes of a vector plan with its stages; fuse: its length is one the
// CPU's VectorPlanShape runs two stages a pass.
template <class T>
std::vector<typename Plan<T>::Pass> plan_passes(const Plan<T>& plan, bool fuse) {
  const auto& st = plan.stages;
  const int stages = static_cast<int>(st.size());
  const int vector_bytes = plan.lanes * static_cast<int>(sizeof(T));
  std::vector<typename Plan<T>::Pass> passes;
  const bool f0 = fuse && stages > 2 && fusible_first(st[1].radix, st[1].len, plan.lanes, vector_bytes);
  passes.push_back({0, f0});
  for (int i = f0 ? 2 : 1; i < stages;) {
    const bool f = fuse && i + 1 < stages && fusible_pair(st[i].radix, st[i + 1].radix, vector_bytes);
    passes.push_back({i, f});
    i += f ? 2 : 1;
  }
  return passes;
}

template <class T>
std::shared_ptr<Plan<T>> build(std::int64_t n, bool flat) {
  auto plan = std::make_shared<Plan<T>>();
  plan->n = n;
  std::vector<int> radices;
  const bool smooth = factor(n, radices);
  // Powers of two from lanes^2 up to the shape's max_bytes start with a stage of
  // radix `lanes` for the vector stages (fft_vector.hpp); the rest factors
  // as before.
  const int lanes = vector_lanes<T>();
  const VectorPlanShape shape = vector_plan_shape<T>();
  bool fuse = false;
  if (lanes > 0 && (n & (n - 1)) == 0 && n >= std::int64_t{lanes} * lanes &&
      n * 2 * static_cast<std::int64_t>(sizeof(T)) <= shape.max_bytes) {
    plan->lanes = lanes;
    plan->y_scratch = shape.y_scratch;
    const std::int64_t bytes = n * 2 * static_cast<std::int64_t>(sizeof(T));
    fuse = bytes > shape.fuse_min_bytes && bytes <= shape.fuse_max_bytes;
    radices = {lanes};
    factor(n / lanes, radices, shape.radix16);
  }
  if (smooth && !flat && n >= kFourStepMin) {
    // n1 (column length) the largest divisor <= sqrt(n): the rows (n2) are the longer side.
    std::int64_t n1 = 1;
    for (std::int64_t d = 1; d * d <= n; ++d)
      if (n % d == 0) n1 = d;
    const std::int64_t n2 = n / n1;
    if (n1 >= 8) {
      plan->cols = plan_for<T>(n1, true);
      plan->rows = plan_for<T>(n2, true);
      constexpr std::int64_t B = kBlock<T>;
      const std::int64_t blocks = (n2 + B - 1) / B;
      plan->block_re.resize(blocks * n1), plan->block_im.resize(blocks * n1);
      plan->lane_re.resize(n1 * B), plan->lane_im.resize(n1 * B);
      double wr, wi;
      for (std::int64_t blk = 0; blk < blocks; ++blk)
        for (std::int64_t k1 = 0; k1 < n1; ++k1) {
          unit_root(k1 * blk * B, n, wr, wi);
          plan->block_re[blk * n1 + k1] = static_cast<T>(wr), plan->block_im[blk * n1 + k1] = static_cast<T>(wi);
        }
      for (std::int64_t k1 = 0; k1 < n1; ++k1)
        for (std::int64_t q = 0; q < B; ++q) {
          unit_root(k1 * q, n, wr, wi);
          plan->lane_re[k1 * B + q] = static_cast<T>(wr), plan->lane_im[k1 * B + q] = static_cast<T>(wi);
        }
      return plan;
    }
  }
  if (!smooth) {
    // Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_(k-j)), c_k = exp(-i pi k^2 / n),
    // a cyclic convolution of length m >= 2n - 1 done by power-of-two FFTs.
    plan->bluestein = true;
    const std::int64_t m = next_pow2(2 * n - 1);
    check_bluestein_memory(n, m);
    plan->sub = plan_for<T>(m);
    plan->chirp_re.resize(n), plan->chirp_im.resize(n);
    std::vector<double> br(m, 0.0), bi(m, 0.0);
    for (std::int64_t k = 0; k < n; ++k) {
      // k^2 mod 2n, exactly: exp(-i pi k^2 / n) = exp(-2 pi i (k^2 mod 2n) / 2n).
      const auto k2 = static_cast<std::int64_t>((static_cast<unsigned __int128>(k) * k) % (2 * n));
      double cr, ci;
      unit_root(k2, 2 * n, cr, ci);
      plan->chirp_re[k] = static_cast<T>(cr), plan->chirp_im[k] = static_cast<T>(ci);
      br[k] = cr, bi[k] = -ci;
      if (k > 0) br[m - k] = cr, bi[m - k] = -ci;
    }
    // The kernel's transform in double whatever T is: it is computed once.
    const auto dplan = plan_for<double>(m);
    std::vector<double> work(static_cast<std::size_t>(dplan->work_size()));
    forward<double>(*dplan, br.data(), bi.data(), work.data(), 1);
    plan->kernel_re.resize(m), plan->kernel_im.resize(m);
    for (std::int64_t k = 0; k < m; ++k)
      plan->kernel_re[k] = static_cast<T>(br[k] / m), plan->kernel_im[k] = static_cast<T>(bi[k] / m);
    return plan;
  }
  std::int64_t len = n;
  for (const int r : radices) {
    typename Plan<T>::Stage st;
    st.radix = r, st.len = len, st.stride = n / len;
    const std::int64_t m = len / r;
    st.tw_re.resize((r - 1) * m), st.tw_im.resize((r - 1) * m);
    for (int k = 1; k < r; ++k)
      for (std::int64_t p = 0; p < m; ++p) {
        double wr, wi;
        unit_root(p * k, len, wr, wi);
        st.tw_re[(k - 1) * m + p] = static_cast<T>(wr), st.tw_im[(k - 1) * m + p] = static_cast<T>(wi);
      }
    if (r % 2 == 1) {
      st.root_cos.resize(r * r), st.root_sin.resize(r * r);
      for (int j = 0; j < r; ++j)
        for (int k = 0; k < r; ++k) {
          double c, s;
          unit_root(static_cast<std::int64_t>(j) * k, r, c, s);
          // sin(2 pi j k / r) = -Im exp(-2 pi i j k / r)
          st.root_cos[j * r + k] = static_cast<T>(c), st.root_sin[j * r + k] = static_cast<T>(-s);
        }
    }
    plan->stages.push_back(std::move(st));
    len = m;
  }
  if (plan->lanes > 0)
    for (auto& st : plan->stages) {
      const std::int64_t m = st.len / st.radix;
      st.tw_by_p.resize(2 * st.tw_re.size());
      for (std::int64_t p = 0; p < m; ++p)
        for (int k = 1; k < st.radix; ++k) {
          st.tw_by_p[2 * ((st.radix - 1) * p + k - 1)] = st.tw_re[(k - 1) * m + p];
          st.tw_by_p[2 * ((st.radix - 1) * p + k - 1) + 1] = st.tw_im[(k - 1) * m + p];
        }
    }
  if (plan->lanes > 0) plan->passes = plan_passes(*plan, fuse);
  if (plan->lanes > 0 && !pair_lanes_in_order(lanes, sizeof(T))) {
    auto& st = plan->stages.front();
    const std::int64_t m = st.len / lanes;
    st.pair_tw_re.resize(st.tw_re.size()), st.pair_tw_im.resize(st.tw_im.size());
    for (int k = 1; k < lanes; ++k)
      for (std::int64_t p0 = 0; p0 < m; p0 += lanes)
        for (int l = 0; l < lanes; ++l) {
          const std::int64_t from = (k - 1) * m + p0 + pair_lane_order(lanes, sizeof(T), l);
          st.pair_tw_re[(k - 1) * m + p0 + l] = st.tw_re[from], st.pair_tw_im[(k - 1) * m + p0 + l] = st.tw_im[from];
        }
  }
  return plan;
}

// A bounded cache: least recently used plans go first once the twiddles held
// pass kCacheBytes (a plan in use stays alive through its shared_ptr).
constexpr std::size_t kCacheBytes = std::size_t{256} << 20;

template <class T>
struct Cache {
  std::mutex mu;
  std::list<std::int64_t> order;  // most recent first
  struct Entry {
    std::shared_ptr<const Plan<T>> plan;
    std::list<std::int64_t>::iterator pos;
    std::size_t bytes;
  };
  std::unordered_map<std::int64_t, Entry> map;
  std::size_t bytes = 0;
};

// What a plan is built with; a real transform's half() adds 2 (n + 1)
// values later, uncounted (at most the size of the plan's own twiddles).
template <class T>
std::size_t bytes_of(const Plan<T>& p) {
  std::size_t b = (p.chirp_re.size() + p.kernel_re.size() + p.block_re.size() + p.lane_re.size()) * 2 * sizeof(T);
  for (const auto& s : p.stages) b += (2 * s.tw_re.size() + s.pair_tw_re.size() + s.root_cos.size()) * 2 * sizeof(T);
  return b;
}

}  // namespace

// The calling thread's last small plan: repeated transforms of one length
// skip the cache's lock, hash and list (a tenth of an op call's own cost at
// n = 1024). Small plans only, so a plan the cache evicts stays alive here
// at most kMemoBytes per thread. `dead` outlives `plan` at thread exit (it
// has no destructor), so a late call does not touch a destroyed memo.
constexpr std::size_t kMemoBytes = std::size_t{1} << 20;
template <class T>
struct Memo {
  std::int64_t key = 0;
  std::shared_ptr<const Plan<T>> plan;
  static inline thread_local bool dead = false;
  ~Memo() { dead = true; }
};
template <class T>
thread_local Memo<T> t_memo;

template <class T>
std::shared_ptr<const Plan<T>> plan_for(std::int64_t n, bool flat) {
  const std::int64_t key = flat ? -n : n;
  Memo<T>* memo = Memo<T>::dead ? nullptr : &t_memo<T>;
  if (memo && memo->plan && memo->key == key) return memo->plan;
  static Cache<T>* cache = new Cache<T>();  // never destroyed: plans may be asked for at exit
  {
    std::lock_guard lock(cache->mu);
    if (auto it = cache->map.find(key); it != cache->map.end()) {
      cache->order.splice(cache->order.begin(), cache->order, it->second.pos);
      if (memo && it->second.bytes <= kMemoBytes) memo->key = key, memo->plan = it->second.plan;
      return it->second.plan;
    }
  }
  // Built outside the lock: Bluestein plans ask for their power-of-two plan.
  std::shared_ptr<const Plan<T>> plan = build<T>(n, flat);
  std::lock_guard lock(cache->mu);
  if (auto it = cache->map.find(key); it != cache->map.end()) return it->second.plan;
  const std::size_t b = bytes_of(*plan);
  cache->order.push_front(key);
  cache->map.emplace(key, typename Cache<T>::Entry{plan, cache->order.begin(), b});
  cache->bytes += b;
  while (cache->bytes > kCacheBytes && cache->order.size() > 1) {
    const std::int64_t victim = cache->order.back();
    cache->order.pop_back();
    cache->bytes -= cache->map.at(victim).bytes;
    cache->map.erase(victim);
  }
  return plan;
}

template <class T>
const Plan<T>& plan_ref(std::int64_t n, std::shared_ptr<const Plan<T>>& hold) {
  if (!Memo<T>::dead) {
    const Memo<T>& memo = t_memo<T>;
    if (memo.plan && memo.key == n) return *memo.plan;
  }
  hold = plan_for<T>(n);
  return *hold;
}

template <class T>
const typename Plan<T>::Half& Plan<T>::half() const {
  std::call_once(half_once, [this] {
    const auto fill = [this](std::vector<T>& re, std::vector<T>& im, std::int64_t count, std::int64_t step) {
      re.resize(count), im.resize(count);
      for (std::int64_t k = 0; k < count; ++k) {
        double wr, wi;
        unit_root(k * step, 2 * n, wr, wi);
        re[k] = static_cast<T>(wr), im[k] = static_cast<T>(wi);
      }
    };
    if (n <= kHalfTable) return fill(half_.re, half_.im, n + 1, 1);
    fill(half_.fine_re, half_.fine_im, kHalfFine, 1);
    fill(half_.coarse_re, half_.coarse_im, n / kHalfFine + 1, kHalfFine);
  });
  return half_;
}

template struct Plan<float>;
template struct Plan<double>;
template std::shared_ptr<const Plan<float>> plan_for<float>(std::int64_t, bool);
template std::shared_ptr<const Plan<double>> plan_for<double>(std::int64_t, bool);
template const Plan<float>& plan_ref<float>(std::int64_t, std::shared_ptr<const Plan<float>>&);
template const Plan<double>& plan_ref<double>(std::int64_t, std::shared_ptr<const Plan<double>>&);

}  // namespace torsh::cpu::fft
