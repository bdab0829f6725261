#pragma once
// Checks each Policy's params against the parameters it declares, or the standard-library
// policy it imports declares (`spec.parameters`, model/policy_params.h): an unknown name
// and a value of the wrong type are errors at the line that wrote them, not a hook that
// fails on every call at run time.
#include "controller/config/diagnostics.h"
#include "controller/config/yaml_field.h"
#include "controller/model/config.h"

namespace gpufed::config {

// Decodes `spec.parameters`: a list of {name, type, unit, keys, min, description}.
void DecodeParameters(const YamlField& field, std::vector<model::ParamSpec>& out);

// Where each member of `params` was written, by JSON pointer ("/maxGpuHourPrice/low").
void RecordParamLocations(const YamlField& params, const std::string& pointer,
                          std::map<std::string, model::SourceLocation>& out);

// Every policy with declared parameters (its own, or those its import brought): each of
// its params is declared, and of the declared type.
void CheckPolicyParams(const model::Config& config, Diagnostics& diagnostics);

}  // namespace gpufed::config
