#pragma once
// A pre-pass over YAML text that runs before anything builds nodes from it.
//
// Why: Debian 12's yaml-cpp 0.7 never returns from YAML::LoadAll when a ',' stands
// outside any flow collection (",", or "a: 1\n---\n,"): its parser starts a new empty
// document at the same position forever and LoadAll keeps allocating (upstream
// jbeder/yaml-cpp#1040, fixed after 0.8.0). The event parser shows the loop without
// building nodes: two documents that start at the same byte mean no progress. This guard
// stops there, and also bounds the number of documents a file may hold and the nodes a
// document may hold (so a large body is refused before LoadAll builds a node of it).
#include <cstddef>
#include <limits>
#include <string>

namespace gpufed::config {

struct YamlStreamProblem {
  bool found = false;
  int line = 0;     // 1-based
  int column = 0;   // 1-based
  std::string message;
};

// Walks the event stream of `text` (YAML syntax errors are left for the real parse to
// report). Returns the first problem: a position where the parser makes no progress,
// more than `max_documents` documents, or a document with more than
// `max_nodes_per_document` nodes (scalars, nulls, aliases, lists and maps, as written).
YamlStreamProblem CheckYamlStream(const std::string& text, size_t max_documents,
                                  size_t max_nodes_per_document = std::numeric_limits<size_t>::max());

}  // namespace gpufed::config
