#pragma once
// The JSON Schemas of this folder, embedded in the binary (schemas/CMakeLists.txt).
#include <map>
#include <string>
#include <string_view>

namespace gpufed::schemas {

// "cluster.schema.json" -> contents, for every *.schema.json of schemas/.
const std::map<std::string, std::string_view>& Files();

}  // namespace gpufed::schemas
