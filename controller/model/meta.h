#pragma once
// Parts shared by every resource kind: where it came from and its metadata.
#include <map>
#include <string>

namespace gpufed::model {

inline constexpr const char* kApiVersion = "gpufed/v1alpha1";

// Position of a YAML node in the policy repository; line and column are 1-based.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  bool operator==(const SourceLocation&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  SourceLocation location;  // of the document's start
  bool operator==(const ObjectMeta&) const = default;
};

}  // namespace gpufed::model
