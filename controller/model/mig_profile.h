#pragma once
// NVIDIA GPU-instance profile names ("<compute>g.<memory>gb", e.g. "3g.40gb"): the one
// parser the config, the placer and every connector share, so a name means the same
// slices wherever it appears.
#include <optional>
#include <string_view>

namespace gpufed::model {

inline constexpr int kMigComputeSlicesPerGpu = 7;

struct MigProfileName {
  int compute_slices = 0;  // 1-7 of kMigComputeSlicesPerGpu
  int memory_gb = 0;
};

// "<1-7>g.<digits>gb" exactly (at most six digits, not all zero); nullopt for anything else. Runs on
// every reservation of a MIG slice, so it allocates nothing.
std::optional<MigProfileName> ParseMigProfile(std::string_view profile);

// Compute slices of a profile name; 0 when it is not one. A profile with NVIDIA's
// attribute suffix ("1g.10gb+me", as device plugins name media-extension instances)
// counts as its base profile.
int MigComputeSlices(std::string_view profile);

// The share of one GPU's compute a profile takes, in milli-GPUs (3g -> 428); 1000 when
// the name is not a profile.
int MigMilliGpu(std::string_view profile);

}  // namespace gpufed::model
