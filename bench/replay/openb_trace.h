#pragma once
// Readers for the Alibaba openb trace files (cluster-trace-gpu-v2023) as used by
// the FGD paper: a node list and a pod list, CSV with a header line. Columns are
// found by header name, so files with extra or reordered columns (the multigpu
// traces have only the first five pod columns) parse the same way.
#include <map>
#include <string>
#include <vector>

#include "controller/common/status.h"
#include "controller/placement/packing/fleet.h"

namespace gpufed::replay {

// One CSV data row: cells by column name, and where it came from.
struct CsvRow {
  int line = 0;
  std::map<std::string, std::string> cells;
};

// Reads `path`: header first, then rows. Blank lines are skipped; a trailing CR
// is dropped. InvalidArgument naming file and line when a row's cell count differs
// from the header's or a `required` column is missing; NotFound if unreadable.
Result<std::vector<CsvRow>> ReadCsv(const std::string& path, const std::vector<std::string>& required);

// Parses a non-negative integer cell. InvalidArgument "FILE:LINE: column 'c': ..." otherwise.
Result<int64_t> IntCell(const std::string& path, const CsvRow& row, const std::string& column);

// Columns sn,cpu_milli,memory_mib,gpu,model.
Result<std::vector<packing::NodeSpec>> ReadOpenbNodes(const std::string& path);
// Columns name,cpu_milli,memory_mib,num_gpu,gpu_milli and optional gpu_spec
// (allowed models separated by '|').
Result<std::vector<packing::PodRequest>> ReadOpenbPods(const std::string& path);

}  // namespace gpufed::replay
