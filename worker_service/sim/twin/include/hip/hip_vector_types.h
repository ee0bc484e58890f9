// Kernel twins: <hip/hip_vector_types.h> is the twin prelude (hipr_twin_prelude.h).
#pragma once
#include "../../hipr_twin_prelude.h"
