// linkscope/resolve/prefix_check.hpp — the former home of the prefix check,
// kept so that existing includes still compile. It was split by phase:
//   resolve/conda_meta.hpp  the conda-meta record reader (untrusted JSON)
//   resolve/packages.hpp    package ownership: conda-meta and dpkg
//   resolve/check.hpp       the prefix walk, the per-file link and the verdicts
// New code includes resolve/check.hpp.
#pragma once

#include "linkscope/resolve/check.hpp"
