#include "controller/ha/replicas.h"

#include <cctype>

namespace gpufed::ha {

Status CheckAdvertisedUrl(std::string_view url) {
  std::string_view rest;
  if (url.starts_with("https://")) {
    rest = url.substr(8);
  } else if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else {
    return InvalidArgument("the advertised API URL must begin with https:// or http://");
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty() || rest.size() > 255) return InvalidArgument("the advertised API URL has no host");
  // HOST[:PORT], a bracketed IPv6 literal allowed: no path, query, user or fragment, so a
  // redirect built from it cannot carry anything but the request's own path.
  for (char c : rest) {
    const bool allowed =
        std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == ':' || c == '[' || c == ']';
    if (!allowed) {
      return InvalidArgument("the advertised API URL may hold only a scheme, a host and a port (found '" +
                             std::string(1, c) + "')");
    }
  }
  return Status::Ok();
}

Status AnnounceReplica(pg::Connection& connection, std::string_view replica, std::string_view api_url) {
  GPUFED_RETURN_IF_ERROR(CheckAdvertisedUrl(api_url));
  std::string url(api_url);
  if (url.back() == '/') url.pop_back();
  auto done = connection.Exec("announce this replica's API",
                              "INSERT INTO gpufed_replicas (name, api_url, announced_at)"
                              " VALUES ($1, $2, clock_timestamp())"
                              " ON CONFLICT (name) DO UPDATE SET api_url = excluded.api_url,"
                              " announced_at = excluded.announced_at",
                              {replica, url});
  return done.ok() ? Status::Ok() : done.status();
}

Result<std::optional<std::string>> ReplicaApiUrl(pg::Connection& connection, std::string_view replica) {
  auto rows = connection.Exec("read a replica's API", "SELECT api_url FROM gpufed_replicas WHERE name = $1", {replica});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<std::string>();
  auto url = rows->Text(0, "api_url");
  if (!url.ok()) return url.status();
  return std::optional<std::string>(*url);
}

}  // namespace gpufed::ha
