#pragma once
// Where each replica serves its API (table gpufed_replicas, the `ha` component's migration
// 2): a standby answers a write with a redirect to the leader's URL, which it finds here
// by the lease's holder. Announcing is not a controller write and is never fenced: a
// standby announces itself too, and the row says nothing about who leads (the lease does).
#include <optional>
#include <string>
#include <string_view>

#include "controller/common/status.h"
#include "controller/pg/connection.h"

namespace gpufed::ha {

// Records (or replaces) `replica`'s API URL. InvalidArgument for a URL that is not
// http(s)://HOST[:PORT] with nothing after the authority but an optional '/': a standby
// copies it into its redirects' Location.
Status AnnounceReplica(pg::Connection& connection, std::string_view replica, std::string_view api_url);

// `replica`'s announced API URL (no trailing '/'); nullopt when it announced none.
Result<std::optional<std::string>> ReplicaApiUrl(pg::Connection& connection, std::string_view replica);

// The check AnnounceReplica makes, for the command line's --advertise.
Status CheckAdvertisedUrl(std::string_view api_url);

}  // namespace gpufed::ha
