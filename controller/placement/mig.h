#pragma once
// NVIDIA Multi-Instance GPU geometry for the models gpufed knows: which GPU-instance
// profiles exist, how many compute and memory slices each takes, and where on the GPU
// each may start. A GPU has 8 memory slices and 7 compute slices; an instance occupies
// a contiguous run of memory slices beginning at one of its allowed starts, and two
// instances never overlap. (A100-40GB, A100-80GB and H100-80GB share the geometry; the
// profile names differ by memory size.)
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/model/mig_profile.h"

namespace gpufed::placement {

using model::kMigComputeSlicesPerGpu;

inline constexpr int kMigMemorySlices = 8;

struct MigProfile {
  std::string name;          // e.g. "1g.10gb"
  int compute_slices = 0;    // the "Ng"
  int memory_slices = 0;     // of kMigMemorySlices
  int memory_gib = 0;        // the "Ngb"
  std::vector<int> starts;   // allowed first memory slice
};

// The profile table of a MIG-capable model, or nullptr.
const std::vector<MigProfile>* MigProfilesFor(std::string_view gpu_model);
// A profile of a model's table by name, or nullptr.
const MigProfile* FindMigProfile(std::string_view gpu_model, std::string_view profile);

// Occupied memory slices of one GPU in MIG mode. Value type; cheap to copy.
class MigLayout {
 public:
  // The start the profile would take (the one that keeps the largest instance still
  // placeable; ties to the lowest start), or nullopt when it does not fit.
  std::optional<int> FindStart(const MigProfile& profile) const;
  bool CanPlaceAt(const MigProfile& profile, int start) const;
  void Place(const MigProfile& profile, int start);
  void Release(const MigProfile& profile, int start);

  int compute_used() const { return compute_used_; }
  uint8_t occupied() const { return occupied_; }
  bool empty() const { return occupied_ == 0; }
  bool operator==(const MigLayout&) const = default;

 private:
  static uint8_t Mask(const MigProfile& profile, int start);
  uint8_t occupied_ = 0;  // bit i: memory slice i taken
  int compute_used_ = 0;
};

}  // namespace gpufed::placement
