#include "bench/replay/openb_trace.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace gpufed::replay {
namespace {

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  out.push_back(std::move(cell));
  return out;
}

std::string Where(const std::string& path, int line) { return path + ":" + std::to_string(line) + ": "; }

}  // namespace

Result<std::vector<CsvRow>> ReadCsv(const std::string& path, const std::vector<std::string>& required) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open file");
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> cells = SplitCsvLine(line);
    if (header.empty()) {
      header = std::move(cells);
      for (std::string& h : header) {
        // Tolerate a UTF-8 byte order mark and stray spaces around names.
        if (h.rfind("\xEF\xBB\xBF", 0) == 0) h.erase(0, 3);
        while (!h.empty() && h.back() == ' ') h.pop_back();
        while (!h.empty() && h.front() == ' ') h.erase(0, 1);
      }
      for (const std::string& r : required) {
        bool found = false;
        for (const std::string& h : header) found = found || h == r;
        if (!found) return InvalidArgument(Where(path, line_no) + "header lacks column '" + r + "'");
      }
      continue;
    }
    if (cells.size() != header.size()) {
      return InvalidArgument(Where(path, line_no) + "expected " + std::to_string(header.size()) + " cells, found " +
                             std::to_string(cells.size()));
    }
    CsvRow row;
    row.line = line_no;
    for (size_t i = 0; i < header.size(); ++i) row.cells[header[i]] = std::move(cells[i]);
    rows.push_back(std::move(row));
  }
  if (in.bad()) return NotFound(path + ": read error");
  if (header.empty()) return InvalidArgument(path + ": empty file (no header line)");
  return rows;
}

Result<int64_t> IntCell(const std::string& path, const CsvRow& row, const std::string& column) {
  auto it = row.cells.find(column);
  if (it == row.cells.end()) return InvalidArgument(Where(path, row.line) + "column '" + column + "' missing");
  const std::string& s = it->second;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return InvalidArgument(Where(path, row.line) + "column '" + column + "': not an integer: '" + s + "'");
  }
  if (v < 0) return InvalidArgument(Where(path, row.line) + "column '" + column + "': negative: " + s);
  return v;
}

Result<std::vector<packing::NodeSpec>> ReadOpenbNodes(const std::string& path) {
  auto rows = ReadCsv(path, {"sn", "cpu_milli", "memory_mib", "gpu", "model"});
  if (!rows.ok()) return rows.status();
  std::vector<packing::NodeSpec> nodes;
  for (const CsvRow& row : *rows) {
    packing::NodeSpec n;
    n.name = row.cells.at("sn");
    auto cpu = IntCell(path, row, "cpu_milli");
    if (!cpu.ok()) return cpu.status();
    auto mem = IntCell(path, row, "memory_mib");
    if (!mem.ok()) return mem.status();
    auto gpu = IntCell(path, row, "gpu");
    if (!gpu.ok()) return gpu.status();
    if (*gpu > 1024) return InvalidArgument(Where(path, row.line) + "column 'gpu': implausible GPU count");
    n.cpu_milli = *cpu;
    n.memory_mib = *mem;
    n.num_gpu = static_cast<int>(*gpu);
    n.model = row.cells.at("model");
    if (n.num_gpu > 0 && n.model.empty()) {
      return InvalidArgument(Where(path, row.line) + "column 'model': empty for a node with GPUs");
    }
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) return InvalidArgument(path + ": no nodes");
  return nodes;
}

Result<std::vector<packing::PodRequest>> ReadOpenbPods(const std::string& path) {
  auto rows = ReadCsv(path, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"});
  if (!rows.ok()) return rows.status();
  std::vector<packing::PodRequest> pods;
  for (const CsvRow& row : *rows) {
    packing::PodRequest p;
    p.name = row.cells.at("name");
    auto cpu = IntCell(path, row, "cpu_milli");
    if (!cpu.ok()) return cpu.status();
    auto mem = IntCell(path, row, "memory_mib");
    if (!mem.ok()) return mem.status();
    auto num = IntCell(path, row, "num_gpu");
    if (!num.ok()) return num.status();
    auto milli = IntCell(path, row, "gpu_milli");
    if (!milli.ok()) return milli.status();
    if (*num > 1024) return InvalidArgument(Where(path, row.line) + "column 'num_gpu': implausible GPU count");
    if (*milli > packing::kMilliPerGpu) {
      return InvalidArgument(Where(path, row.line) + "column 'gpu_milli': above 1000");
    }
    p.cpu_milli = *cpu;
    p.memory_mib = *mem;
    p.num_gpu = static_cast<int>(*num);
    p.gpu_milli = static_cast<int>(*milli);
    if (p.num_gpu > 1 && p.gpu_milli > 0 && p.gpu_milli < packing::kMilliPerGpu) {
      return InvalidArgument(Where(path, row.line) + "column 'gpu_milli': a share (<1000) needs num_gpu 1");
    }
    if (auto it = row.cells.find("gpu_spec"); it != row.cells.end() && !it->second.empty()) {
      std::stringstream ss(it->second);
      std::string model;
      while (std::getline(ss, model, '|')) {
        if (!model.empty()) p.allowed_models.push_back(model);
      }
    }
    pods.push_back(std::move(p));
  }
  if (pods.empty()) return InvalidArgument(path + ": no pods");
  return pods;
}

}  // namespace gpufed::replay
