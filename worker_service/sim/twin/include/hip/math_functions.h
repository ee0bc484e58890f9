// Kernel twins: <hip/math_functions.h> is the twin prelude (hipr_twin_prelude.h).
#pragma once
#include "../../hipr_twin_prelude.h"
