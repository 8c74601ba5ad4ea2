// Loom public C++ API: umbrella header.
#pragma once
#include "loom/config.h"
#include "loom/environment.h"
#include "loom/graph_passes.h"
#include "loom/io_binding.h"
#include "loom/session.h"
#include "loom/status.h"
#include "loom/tensor.h"
#include "loom/tensor_io.h"
#include "loom/value.h"
