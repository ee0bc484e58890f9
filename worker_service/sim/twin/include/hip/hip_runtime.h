// Kernel twins: <hip/hip_runtime.h> is the twin prelude (hipr_twin_prelude.h).
#pragma once
#include "../../hipr_twin_prelude.h"
