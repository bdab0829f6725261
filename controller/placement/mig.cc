#include "controller/placement/mig.h"

#include <algorithm>
#include <array>

namespace gpufed::placement {
namespace {

// One table per memory size: the geometry is the same, the names scale with memory.
std::vector<MigProfile> Table(int gib_per_slice) {
  auto name = [&](int g, int slices) { return std::to_string(g) + "g." + std::to_string(slices * gib_per_slice) + "gb"; };
  return {
      {name(1, 1), 1, 1, gib_per_slice, {0, 1, 2, 3, 4, 5, 6}},
      {name(1, 2), 1, 2, 2 * gib_per_slice, {0, 2, 4, 6}},
      {name(2, 2), 2, 2, 2 * gib_per_slice, {0, 2, 4}},
      {name(3, 4), 3, 4, 4 * gib_per_slice, {0, 4}},
      {name(4, 4), 4, 4, 4 * gib_per_slice, {0}},
      {name(7, 8), 7, 8, 8 * gib_per_slice, {0}},
  };
}

}  // namespace

const std::vector<MigProfile>* MigProfilesFor(std::string_view gpu_model) {
  static const std::vector<MigProfile> k40 = Table(5);   // A100-40GB: 1g.5gb ... 7g.40gb
  static const std::vector<MigProfile> k80 = Table(10);  // A100-80GB, H100-80GB: 1g.10gb ... 7g.80gb
  if (gpu_model == "A100-40GB") return &k40;
  if (gpu_model == "A100-80GB" || gpu_model == "H100-80GB" || gpu_model == "H100") return &k80;
  return nullptr;
}

const MigProfile* FindMigProfile(std::string_view gpu_model, std::string_view profile) {
  const std::vector<MigProfile>* table = MigProfilesFor(gpu_model);
  if (table == nullptr) return nullptr;
  for (const MigProfile& p : *table) {
    if (p.name == profile) return &p;
  }
  return nullptr;
}

uint8_t MigLayout::Mask(const MigProfile& profile, int start) {
  return static_cast<uint8_t>(((1u << profile.memory_slices) - 1u) << start);
}

namespace {

// The largest free aligned run of memory slices (8, 4, 2, 1, or 0 when all are taken)
// for every occupancy: FindStart's measure of the room a start leaves, looked up rather
// than searched, since the placer asks it of every GPU of every MIG node it fits on.
constexpr std::array<uint8_t, 256> kRoomLeft = [] {
  std::array<uint8_t, 256> room{};
  for (int occupied = 0; occupied < 256; ++occupied) {
    for (int size : {8, 4, 2, 1}) {
      for (int s = 0; s + size <= kMigMemorySlices && room[occupied] == 0; s += size) {
        if ((occupied & (((1 << size) - 1) << s)) == 0) room[occupied] = static_cast<uint8_t>(size);
      }
      if (room[occupied] != 0) break;
    }
  }
  return room;
}();

}  // namespace

bool MigLayout::CanPlaceAt(const MigProfile& profile, int start) const {
  if (std::find(profile.starts.begin(), profile.starts.end(), start) == profile.starts.end()) return false;
  if (start + profile.memory_slices > kMigMemorySlices) return false;
  if (compute_used_ + profile.compute_slices > kMigComputeSlicesPerGpu) return false;
  return (occupied_ & Mask(profile, start)) == 0;
}

std::optional<int> MigLayout::FindStart(const MigProfile& profile) const {
  if (compute_used_ + profile.compute_slices > kMigComputeSlicesPerGpu) return std::nullopt;
  std::optional<int> best;
  int best_room = -1;
  for (int start : profile.starts) {
    if (start + profile.memory_slices > kMigMemorySlices) continue;
    const uint8_t mask = Mask(profile, start);
    if ((occupied_ & mask) != 0) continue;
    // Room left: the largest free aligned run afterwards (a proxy for the biggest
    // profile that still fits), so small instances do not break up big holes.
    const int room = kRoomLeft[occupied_ | mask];
    if (room > best_room) {
      best_room = room;
      best = start;
    }
  }
  return best;
}

void MigLayout::Place(const MigProfile& profile, int start) {
  occupied_ |= Mask(profile, start);
  compute_used_ += profile.compute_slices;
}

void MigLayout::Release(const MigProfile& profile, int start) {
  occupied_ &= static_cast<uint8_t>(~Mask(profile, start));
  compute_used_ -= profile.compute_slices;
}

}  // namespace gpufed::placement
