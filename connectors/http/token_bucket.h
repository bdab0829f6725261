#pragma once
// Retry-After and HTTP dates, as the HTTP connectors' clients read them. The token
// bucket they pace requests with is controller/common/token_bucket.h.
#include <optional>

#include "controller/common/duration.h"
#include "controller/common/token_bucket.h"

namespace gpufed::connectors::http {

using gpufed::TokenBucket;

// Parses a Retry-After value: delta-seconds ("120"), or an HTTP-date ("Wed, 21 Oct 2015
// 07:28:00 GMT") taken relative to the response's Date header (so clock skew between
// us and the server does not matter). nullopt when unparseable or without a Date.
std::optional<Duration> ParseRetryAfter(const std::string& value, const std::string& date_header);

// Seconds since the Unix epoch for an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT");
// nullopt when malformed.
std::optional<int64_t> ParseHttpDate(const std::string& text);

}  // namespace gpufed::connectors::http
