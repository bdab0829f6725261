#pragma once
// Bounds on what a cluster can be, shared by the repository loader (which refuses more)
// and the connectors (which clamp what a remote API reports), so absurd input is an error
// or a clamp rather than a silent overflow later.
#include <cstdint>

namespace gpufed::model {

inline constexpr int64_t kMaxGpusPerNode = 64;

}  // namespace gpufed::model
