#pragma once
// The field reference of every resource kind, as Markdown, generated from the JSON
// Schemas (`gpufed docs fields`; docs/field-reference.md is its output, and tests/docs
// fails when the two differ). One table per kind, in the order gpufed.schema.json picks
// them: every field's path, type, whether it is required, what it means and the values
// it takes, so the schema's descriptions are the one place a field is documented.
#include <map>
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed::cli {

// `files`: schema file name ("cluster.schema.json") -> its text. An error names the
// file and the JSON pointer the walk could not follow.
Result<std::string> FieldReference(const std::map<std::string, std::string_view>& files);

}  // namespace gpufed::cli
