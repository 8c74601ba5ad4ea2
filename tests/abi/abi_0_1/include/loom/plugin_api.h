/* Loom plugin ABI: umbrella header. Version LOOM_ABI_VERSION_MAJOR.MINOR. */
#ifndef LOOM_PLUGIN_API_H
#define LOOM_PLUGIN_API_H
#include "loom/abi/base.h"
#include "loom/abi/host.h"
#include "loom/abi/kernel.h"
#include "loom/abi/device.h"
#include "loom/abi/ep.h"
#include "loom/abi/plugin.h"
#endif
