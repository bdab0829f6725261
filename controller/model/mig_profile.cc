#include "controller/model/mig_profile.h"

namespace gpufed::model {

std::optional<MigProfileName> ParseMigProfile(std::string_view profile) {
  constexpr size_t kMaxMemoryDigits = 6;
  if (profile.size() < 6 || profile[0] < '1' || profile[0] > '7' || profile.substr(1, 2) != "g." ||
      profile.substr(profile.size() - 2) != "gb") {
    return std::nullopt;
  }
  const size_t digits = profile.size() - 5;
  if (digits > kMaxMemoryDigits) return std::nullopt;
  int memory_gb = 0;
  for (size_t i = 3; i < 3 + digits; ++i) {
    if (profile[i] < '0' || profile[i] > '9') return std::nullopt;
    memory_gb = memory_gb * 10 + (profile[i] - '0');
  }
  if (memory_gb == 0) return std::nullopt;
  return MigProfileName{profile[0] - '0', memory_gb};
}

int MigComputeSlices(std::string_view profile) {
  const size_t plus = profile.find('+');
  std::optional<MigProfileName> name = ParseMigProfile(profile.substr(0, plus));
  return name ? name->compute_slices : 0;
}

int MigMilliGpu(std::string_view profile) {
  const int slices = MigComputeSlices(profile);
  return slices == 0 ? 1000 : slices * 1000 / kMigComputeSlicesPerGpu;
}

}  // namespace gpufed::model
