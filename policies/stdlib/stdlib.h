#pragma once
// The standard policy library, embedded in the binary: a Policy imports one with
// `import: stdlib/NAME`, and Lua files are referenced as `stdlib/NAME.lua`.
#include <map>
#include <string>
#include <string_view>

namespace gpufed::stdlib {

// "stdlib/burst.yaml" -> contents, for every file of policies/stdlib (not its tests).
const std::map<std::string, std::string_view>& Files();

}  // namespace gpufed::stdlib
