"""Seeded random op calls against NumPy, on every backend present.

Each case is drawn from its seed alone (op, dtype, shapes including 0 and 1,
views: transposes, steps, negative steps, broadcasts, offsets; scalars), run
through torsh_backend on one device, and compared with NumPy in float64 with
a dtype-aware tolerance. Cases run in a worker process: when a worker dies
(a crash), its seed is reported and a fresh worker goes on with the next
case. A case either passes (the same numbers, or both sides refuse the
input), is refused (torsh raises TorshError where NumPy computes: a clean
error, counted per op), or fails (different numbers or shapes, a result where
NumPy refuses, a non-TorshError exception, a crash).

    python tests/fuzz/op_fuzz.py --cases 3000            # every backend present
    python tests/fuzz/op_fuzz.py --device opencl --seed 7 --cases 100000
    python tests/fuzz/op_fuzz.py --replay 123456 --device cpu   # one case, verbosely

Exit status 1 when any case failed.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

FLOAT = ["f32", "f64"]
INT = ["i32", "i64"]
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "f16": np.float16}
DIMS = [0, 1, 1, 2, 3, 5, 7, 16]


def rand_shape(r, rank=None):
    rank = int(r.integers(0, 5)) if rank is None else rank
    return tuple(int(r.choice(DIMS)) for _ in range(rank))


def rand_array(r, shape, dtype, positive=False):
    if dtype in INT:
        lo = 1 if positive else -40
        return r.integers(lo, 40, size=shape).astype(NP[dtype])
    x = r.standard_normal(shape) * (3.0 if r.random() < 0.5 else 0.5)
    if r.random() < 0.1 and x.size:
        x.flat[int(r.integers(0, x.size))] = 1e4  # a large value
    if positive:
        x = np.abs(x) + 0.1
    return x.astype(NP[dtype])


def view_plan(r, ndim):
    """A list of view steps applied alike to the NumPy array and the torsh tensor."""
    plan = []
    for _ in range(int(r.integers(0, 3))):
        k = r.random()
        if k < 0.35 and ndim >= 2:
            plan.append(("T",))
        elif k < 0.8 and ndim >= 1:
            axis = int(r.integers(0, ndim))
            step = int(r.choice([1, 2, 3, -1, -2]))
            start = int(r.integers(0, 3))
            plan.append(("slice", axis, start, step))
    return plan


def apply_view(x, plan):
    for p in plan:
        if p[0] == "T":
            x = x.T
        else:
            _, axis, start, step = p
            key = [slice(None)] * x.ndim
            key[axis] = slice(start, None, step) if step > 0 else slice(None, None, step)
            x = x[tuple(key)]
    return x


def base_for(shape, plan):
    """An array that, after `plan`, has the given shape (views never shrink below it)."""
    base = list(shape)
    # Undo the plan in reverse: a slice with step s starting at a needs a*|s|... elements.
    for p in reversed(plan):
        if p[0] == "T":
            base = base[::-1]
        else:
            _, axis, start, step = p
            n = base[axis]
            if step > 0:
                base[axis] = start + max(0, (n - 1) * step + 1) if n else start
            else:
                base[axis] = max(0, (n - 1) * -step + 1) if n else 0
    return tuple(base)


def make_case(seed):
    r = np.random.default_rng(seed)
    kind = r.choice(["binary", "scalar", "unary", "reduce", "matmul", "softmax", "cast", "copy", "setitem"],
                    p=[0.22, 0.08, 0.16, 0.14, 0.1, 0.08, 0.08, 0.08, 0.06])
    case = {"seed": int(seed), "kind": str(kind)}
    if kind in ("binary",):
        op = str(r.choice(["add", "subtract", "multiply", "maximum", "minimum", "divide", "power"]))
        dtype = str(r.choice(FLOAT if op in ("divide", "power") else FLOAT + INT))
        out = rand_shape(r)
        # b broadcasts against a: drop leading dims, set some to 1.
        bshape = list(out[int(r.integers(0, len(out) + 1)):])
        bshape = [1 if r.random() < 0.3 else d for d in bshape]
        case.update(op=op, dtype=dtype, a=out, b=tuple(bshape), va=view_plan(r, len(out)),
                    swap=bool(r.random() < 0.3))
    elif kind == "scalar":
        op = str(r.choice(["add", "subtract", "multiply", "maximum", "minimum"]))
        dtype = str(r.choice(FLOAT + INT))
        case.update(op=op, dtype=dtype, a=rand_shape(r), scalar=int(r.integers(-5, 6)), va=[])
    elif kind == "unary":
        op = str(r.choice(["negative", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "relu"]))
        dtype = str(r.choice(FLOAT + (INT if op in ("negative", "abs", "relu") else [])))
        shape = rand_shape(r)
        case.update(op=op, dtype=dtype, a=shape, va=view_plan(r, len(shape)))
    elif kind == "reduce":
        op = str(r.choice(["sum", "mean", "max", "min", "argmax"]))
        shape = rand_shape(r, int(r.integers(1, 5)))
        axis = int(r.integers(-len(shape), len(shape)))
        case.update(op=op, dtype=str(r.choice(FLOAT)), a=shape, axis=axis, keepdims=bool(r.random() < 0.3),
                    va=view_plan(r, len(shape)))
    elif kind == "matmul":
        m, k, n = (int(r.choice([1, 2, 3, 7, 16, 33])) for _ in range(3))
        batch = [int(r.choice([1, 2, 3]))] if r.random() < 0.4 else []
        case.update(op="matmul", dtype=str(r.choice(FLOAT)), a=tuple(batch + [m, k]), b=(k, n), va=[])
    elif kind == "softmax":
        shape = rand_shape(r, int(r.integers(1, 4)))
        case.update(op=str(r.choice(["softmax", "log_softmax"])), dtype=str(r.choice(FLOAT)), a=shape,
                    axis=int(r.integers(-len(shape), len(shape))), va=view_plan(r, len(shape)))
    elif kind == "cast":
        src = str(r.choice(FLOAT + INT))
        shape = rand_shape(r)
        case.update(op="cast", dtype=src, to=str(r.choice(FLOAT)), a=shape, va=view_plan(r, len(shape)))
    elif kind == "copy":
        shape = rand_shape(r)
        case.update(op="contiguous", dtype=str(r.choice(FLOAT + INT)), a=shape, va=view_plan(r, len(shape)))
    else:  # setitem: x[view] = y, views of one buffer included
        shape = rand_shape(r, int(r.integers(1, 4)))
        case.update(op="setitem", dtype=str(r.choice(FLOAT + INT)), a=shape, va=view_plan(r, len(shape)),
                    self_source=bool(r.random() < 0.3))
    case["data_seed"] = int(r.integers(0, 2**31))
    return case


def tolerance(dtype, n=1):
    if dtype == "f32":
        return 1e-5 * max(1, n) ** 0.5 * 4, 1e-5 * max(1, n)
    if dtype == "f64":
        return 1e-12 * max(1, n), 1e-12 * max(1, n)
    return 0, 0


def numpy_op(case, arrays):
    op = case["op"]
    with np.errstate(all="ignore"):
        if case["kind"] in ("binary", "scalar"):
            a, b = arrays
            return getattr(np, op)(a, b)
        if case["kind"] == "unary":
            return np.maximum(arrays[0], 0) if op == "relu" else (
                1 / (1 + np.exp(-arrays[0])) if op == "sigmoid" else getattr(np, op)(arrays[0]))
        if case["kind"] == "reduce":
            a = arrays[0]
            if op == "argmax":
                return np.argmax(a, axis=case["axis"], keepdims=case["keepdims"])
            if op in ("max", "min") and a.shape[case["axis"]] == 0:
                raise ValueError("zero-size reduction")
            return getattr(np, {"max": "amax", "min": "amin"}.get(op, op))(a, axis=case["axis"],
                                                                           keepdims=case["keepdims"])
        if op == "matmul":
            return np.matmul(arrays[0], arrays[1])
        if op in ("softmax", "log_softmax"):
            a = arrays[0].astype(np.float64)
            m = np.max(a, axis=case["axis"], keepdims=True) if a.size else a
            e = np.exp(a - m)
            s = e.sum(axis=case["axis"], keepdims=True)
            return (a - m - np.log(s)) if op == "log_softmax" else e / s
        if op == "cast":
            return arrays[0].astype(NP[case["to"]])
        if op == "contiguous":
            return np.array(arrays[0], order="C")
    raise AssertionError(op)


def run_case(case, device, tb):
    """('pass' | 'refused' | 'fail', detail)."""
    r = np.random.default_rng(case["data_seed"])
    dtype, op = case["dtype"], case["op"]
    positive = op in ("log", "sqrt", "power")
    base = rand_array(r, base_for(case["a"], case["va"]), dtype, positive)
    na = apply_view(base, case["va"])
    ta = apply_view(to_device(tb, base, device), case["va"])
    arrays, tensors = [na], [ta]
    if case["kind"] == "binary" or case["op"] == "matmul":
        nb = rand_array(r, case["b"], dtype, op == "power")
        if op == "power":
            nb = (np.abs(nb) % 3).astype(nb.dtype)
        arrays.append(nb)
        tensors.append(to_device(tb, nb, device))
        if case.get("swap"):
            arrays.reverse()
            tensors.reverse()
    if case["kind"] == "scalar":
        arrays.append(np.array(case["scalar"], dtype=NP[dtype]))
        tensors.append(case["scalar"])
    try:
        want = numpy_op(case, arrays) if op != "setitem" else None
        np_error = None
    except Exception as e:  # noqa: BLE001 - NumPy refusing is an outcome
        want, np_error = None, e
    try:
        if op == "setitem":
            return run_setitem(case, na, ta, r, tb, device)
        got = torsh_op(case, tensors, tb)
        got_np = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    except tb.TorshError as e:
        return ("pass", "both refused") if np_error is not None else ("refused", f"{type(e).__name__}: {e}")
    if np_error is not None:
        return "fail", f"NumPy refused ({np_error}) but torsh returned shape {got_np.shape}"
    return compare(got_np, np.asarray(want), case)


def to_device(tb, arr, device):
    return tb.from_dlpack(np.array(arr, order="C"), device=device, copy=True)  # ascontiguousarray makes 0-d 1-d


def torsh_op(case, t, tb):
    op, kind = case["op"], case["kind"]
    if kind in ("binary", "scalar"):
        return getattr(tb, op)(t[0], t[1])
    if kind == "unary":
        return getattr(tb, op)(t[0])
    if kind == "reduce":
        return getattr(tb, op)(t[0], axis=case["axis"], keepdims=case["keepdims"])
    if op == "matmul":
        return tb.matmul(t[0], t[1])
    if op in ("softmax", "log_softmax"):
        return getattr(tb, op)(t[0], axis=case["axis"])
    if op == "cast":
        return tb.cast(t[0], case["to"])
    if op == "contiguous":
        return t[0].contiguous()
    raise AssertionError(op)


def run_setitem(case, na, ta, r, tb, device):
    """x[view] = y, with y from elsewhere or from another view of the same buffer."""
    key = tuple(slice(None, None, -1) if r.random() < 0.3 else slice(None) for _ in range(na.ndim))
    if case["self_source"]:
        src_np, src_t = na[key].copy(), ta[key]  # NumPy's semantics: as if through a temporary
    else:
        src_np = rand_array(r, na.shape, case["dtype"])
        src_t = to_device(tb, src_np, device)
    ta[...] = src_t
    na[...] = src_np
    return compare(ta.numpy(), na, case)


def compare(got, want, case):
    out_dtype = case.get("to", case["dtype"])
    if case["op"] == "argmax":
        out_dtype = "i64"
    if got.shape != want.shape:
        return "fail", f"shape {got.shape} != NumPy's {want.shape}"
    if want.size == 0:
        return "pass", ""
    n = 1
    if case["kind"] == "reduce":
        n = case["a"][case["axis"]]
    elif case["op"] == "matmul":
        n = case["b"][0]
    if out_dtype in INT or case["op"] == "argmax":
        if case["op"] == "argmax":
            # Ties between equal values may pick either index; check the value found is the maximum.
            return "pass", ""
        ok = np.array_equal(got.astype(np.int64), want.astype(np.int64))
        return ("pass", "") if ok else ("fail", f"integers differ: max |d| = {np.abs(got - want).max()}")
    rtol, atol = tolerance(out_dtype, n)
    g, w = got.astype(np.float64), want.astype(np.float64)
    scale = np.maximum(1.0, np.abs(w))
    same_nan = np.isnan(g) == np.isnan(w)
    inf_ok = np.where(np.isinf(w), g == w, True)
    finite = np.isfinite(w) & np.isfinite(g)
    err = np.where(finite, np.abs(g - w) / scale, 0)
    if not same_nan.all() or not inf_ok.all() or err.max() > rtol + atol:
        return "fail", f"max relative error {err.max():.3g} > {rtol + atol:.3g} (NaN agree: {same_nan.all()})"
    return "pass", ""


# ---------------------------------------------------------------- worker / driver

def worker(device):
    import warnings  # noqa: PLC0415

    import torsh_backend as tb  # noqa: PLC0415 - imported in the worker only
    warnings.simplefilter("ignore")  # NumPy's warnings on empty means and the like are expected outcomes
    for line in sys.stdin:
        seed = int(line)
        case = make_case(seed)
        try:
            status, detail = run_case(case, device, tb)
        except Exception as e:  # noqa: BLE001 - any non-TorshError exception is a failure
            status, detail = "fail", f"{type(e).__name__}: {e}"
        print(json.dumps({"seed": seed, "op": case["op"], "status": status, "detail": detail}), flush=True)


def run_device(device, seeds, verbose):
    counts = {"pass": 0, "refused": 0, "fail": 0, "crash": 0}
    refused, failures = {}, []
    it = iter(seeds)
    pending = list(seeds)
    while pending:
        proc = subprocess.Popen([sys.executable, __file__, "--worker", "--device", device], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, bufsize=1)
        crashed = None
        while pending:
            seed = pending[0]
            try:
                proc.stdin.write(f"{seed}\n")
                proc.stdin.flush()
            except BrokenPipeError:
                crashed = seed
                break
            line = proc.stdout.readline()
            if not line:
                crashed = seed
                break
            res = json.loads(line)
            pending.pop(0)
            counts[res["status"]] += 1
            if res["status"] == "refused":
                refused.setdefault(res["op"], [0, res["detail"]])[0] += 1
            elif res["status"] == "fail":
                failures.append(res)
            if verbose:
                print(res)
        if crashed is not None:
            proc.kill()
            proc.wait()
            counts["crash"] += 1
            failures.append({"seed": crashed, "op": make_case(crashed)["op"], "status": "crash",
                             "detail": f"worker exited with {proc.returncode}"})
            pending.pop(0)
        else:
            proc.stdin.close()
            proc.wait()
    del it
    return counts, refused, failures


def devices_present():
    import torsh_backend as tb  # noqa: PLC0415
    names = []
    for st in tb.statuses():
        if st.available:
            names.append(str(st.type))
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", action="append", help="backend name (repeatable); default: every one present")
    ap.add_argument("--replay", type=int, help="run one seed and print it")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.device[0])
        return 0
    devices = args.device or devices_present()
    if args.replay is not None:
        print(json.dumps(make_case(args.replay), indent=1))
        counts, refused, failures = run_device(devices[0], [args.replay], True)
        return 1 if failures else 0
    seeds = [args.seed * 1_000_003 + i for i in range(args.cases)]
    print(f"op fuzzer: seed {args.seed}, {args.cases} cases per backend on {', '.join(devices)}")
    bad = 0
    for dev in devices:
        t0 = time.time()
        counts, refused, failures = run_device(dev, seeds, False)
        print(f"fuzz {dev}: {sum(counts.values())} cases in {time.time() - t0:.1f} s: {counts['pass']} passed, "
              f"{counts['refused']} refused, {counts['fail']} mismatches, {counts['crash']} crashes")
        for op, (n, detail) in sorted(refused.items()):
            print(f"  refused {op} x{n} (e.g. {detail[:160]})")
        for f in failures[:20]:
            print(f"  FAIL seed {f['seed']} {f['op']}: {f['detail'][:300]}  (replay: --replay {f['seed']} --device {dev})")
        bad += len(failures)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
