#pragma once
// Field names and types of the Kubernetes objects gpufed writes, carried over from the
// official OpenAPI definitions (kubernetes/kubernetes api/openapi-spec/v3:
// apis__batch__v1_openapi.json, api__v1_openapi.json): io.k8s.api.batch.v1.Job and
// JobSpec, io.k8s.api.core.v1.PodTemplateSpec, PodSpec, Container, EnvVar,
// ResourceRequirements, Toleration, Affinity and its node/pod affinity types,
// io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta, LabelSelector, DeleteOptions.
// Every field of those types is listed, so a misspelt name is "unknown"; types the
// connector never writes are accepted as opaque objects or arrays.
//
// Two kinds of check, as the API server makes them:
//   Decode(): structure: unknown fields and JSON type mismatches (HTTP 400; unknown
//             fields only under fieldValidation=Strict, a Warning header otherwise).
//   ValidateJob(): semantic validation (HTTP 422 Invalid): required fields, names,
//             enum values, extended resources, ...
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpufed::testing {

struct FieldError {
  std::string field;    // "spec.template.spec.containers[0].resorces"
  std::string reason;   // FieldValueRequired, FieldValueInvalid, FieldValueNotSupported, ...
  std::string message;
};

struct DecodeResult {
  std::vector<std::string> unknown_fields;   // paths
  std::vector<std::string> type_errors;      // messages
};

// `type`: "Job" or "DeleteOptions".
DecodeResult Decode(const nlohmann::json& object, const std::string& type);

// Semantic validation of a decoded Job, as the batch/v1 create path does it.
std::vector<FieldError> ValidateJob(const nlohmann::json& job);

// DNS-1123 label (<= 63) and subdomain (<= 253) checks; label keys and values.
bool IsDns1123Label(const std::string& s);
bool IsDns1123Subdomain(const std::string& s);
bool IsQualifiedName(const std::string& s);   // label/annotation key
bool IsLabelValue(const std::string& s);

}  // namespace gpufed::testing
