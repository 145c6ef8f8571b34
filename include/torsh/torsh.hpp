#pragma once
// Everything a user of torsh needs.
#include "torsh/core/device.hpp"
#include "torsh/core/dtype.hpp"
#include "torsh/core/error.hpp"
#include "torsh/core/shape.hpp"
#include "torsh/ops/mixed_precision.hpp"
#include "torsh/ops/ops.hpp"
#include "torsh/runtime/backend.hpp"
#include "torsh/runtime/graph.hpp"
#include "torsh/runtime/profiler.hpp"
#include "torsh/runtime/registry.hpp"
#include "torsh/runtime/tensor.hpp"
#include "torsh/version.hpp"
