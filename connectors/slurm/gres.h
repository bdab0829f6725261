#pragma once
// Slurm GRES strings as slurmctld prints them, parsed into counts and device indices.
//
//   gres       "gpu:a100:2,gpu:a100_1g.5gb:4"            (configured; may carry "(S:0-1)")
//   gres_used  "gpu:a100:1(IDX:0),gpu:a100_1g.5gb:0(IDX:N/A)"
//   job        "gpu:a100:2(IDX:0-1)"                     (gres_detail of a running job)
//
// MIG-like types follow NVIDIA's profile names after an underscore: "a100_1g.5gb" is a
// 1-compute-slice, 5 GB instance of an A100 (Slurm's NVML autodetection names them the
// same way, e.g. "nvidia_a100-sxm4-40gb_1g.5gb"). Parsing never fails on odd input:
// items it cannot read are skipped, so one strange node cannot hide the others.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpufed::connectors::slurm {

struct GresItem {
  std::string name;          // "gpu"
  std::string type;          // "a100", "a100_1g.5gb"; empty when untyped
  int count = 0;
  std::vector<int> indices;  // from "(IDX:0-1,3)"; empty when absent or N/A
};

// Splits a GRES list on the commas outside parentheses. Empty, "(null)" and "N/A" give {}.
std::vector<GresItem> ParseGres(std::string_view text);
// "0-1,3" -> {0, 1, 3}; "N/A" -> {}. Ranges are capped so hostile input stays small.
std::vector<int> ParseIndexList(std::string_view text);

struct MigType {
  std::string base;          // "a100"
  std::string profile;       // "1g.5gb"
  int compute_slices = 0;    // the "1g"
  int memory_gb = 0;         // the "5gb"
};

// "a100_1g.5gb" -> {a100, 1g.5gb, 1, 5}; nullopt for a whole-GPU type such as "a100".
std::optional<MigType> ParseMigType(std::string_view type);

// Whether a GRES type names the GPU model of a node pool: "a100" matches "A100-40GB"
// and "A100"; "nvidia_a100-sxm4-40gb" matches "A100-SXM4-40GB". Case-insensitive;
// '_' and '-' are the same; a leading "nvidia" is ignored.
bool TypeMatchesModel(std::string_view type, std::string_view model);

}  // namespace gpufed::connectors::slurm
