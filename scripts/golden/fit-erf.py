#!/usr/bin/env python3
"""Coefficients of the piecewise erf in src/backends/cpu/simd/simd_gelu.hpp.

erf(z) on [0, 4) is split into 4 intervals of width 1; on interval i it is a
degree-8 polynomial in t = z - (i + 1/2), fitted by least squares on 64
Chebyshev nodes in double precision. Prints the C++ table (coefficient j of
every interval on one line; the kernels broadcast it to each 128-bit lane,
where an in-lane permute picks interval i's) and the worst error against math.erf over a fine
grid, evaluated as the kernel does (Horner in float32).
"""
import math

import numpy as np

INTERVALS, DEGREE, WIDTH = 4, 8, 1.0


def fit(i):
    c = i * WIDTH + WIDTH / 2
    k = np.arange(64)
    t = np.cos((2 * k + 1) * np.pi / 128) * (WIDTH / 2)
    y = np.array([math.erf(c + v) for v in t])
    return np.polynomial.polynomial.polyfit(t, y, DEGREE)  # lowest degree first


coef = np.array([fit(i) for i in range(INTERVALS)], dtype=np.float32)  # [interval, power]


def erf32(z):
    i = min(int(z / WIDTH), INTERVALS - 1)
    t = np.float32(z - (i * WIDTH + WIDTH / 2))
    p = coef[i, DEGREE]
    for j in range(DEGREE - 1, -1, -1):
        p = np.float32(p * t + coef[i, j])
    return min(float(p), 1.0)


worst = max(abs(erf32(z) - math.erf(z)) for z in np.linspace(0, 3.9999, 200001))
print(f"// max |error| on [0, 4): {worst:.2e}")
for j in range(DEGREE + 1):
    print("    {" + ", ".join(f"{float(v):.9g}f" for v in list(coef[:, j])) + "},")
