// Loom plugin SDK: umbrella header (header-only, C++17).
#pragma once
#include "loom/sdk/checked.h"
#include "loom/sdk/custom_op.h"
#include "loom/sdk/dtype.h"
#include "loom/sdk/ep.h"
#include "loom/sdk/host.h"
#include "loom/sdk/kernel.h"
#include "loom/sdk/node.h"
#include "loom/sdk/tensor.h"
#include "loom/sdk/value.h"
#include "loom/sdk/window.h"
