#pragma once
// PostgreSQL errors as gpufed Status codes, chosen by SQLSTATE so callers react by kind:
//   40001 serialization_failure, 40P01 deadlock_detected      -> kAborted (redo the transaction)
//   08xxx connection exceptions, 57P01..57P03 shutdown/startup,
//   25006 read_only_sql_transaction (a standby), 55P03 lock_not_available,
//   53300 too_many_connections, or a lost connection            -> kUnavailable (back off, retry)
//   57014 query_canceled (statement_timeout)                    -> kDeadlineExceeded
//   23505 unique_violation                                      -> kAlreadyExists
//   other 23xxx integrity violations                            -> kFailedPrecondition
//   28xxx invalid authorization                                 -> kUnauthenticated
//   42501 insufficient_privilege                                -> kPermissionDenied
//   53xxx insufficient resources                                -> kResourceExhausted
//   22xxx data exceptions                                       -> kInvalidArgument
//   GFxxx gpufed's own refusals, raised by its server-side
//         functions (controller/ha's fence: this session's
//         replica no longer leads; another does)               -> kUnavailable (not here:
//         the API answers 503, and a client retries at the leader; a 409 would tell
//         it that the request itself conflicts)
//   anything else (42xxx syntax or undefined objects, XX000...) -> kInternal (a bug here)
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed::pg {

StatusCode StatusCodeForSqlState(std::string_view sqlstate);

// "<purpose>: <what the server said> (SQLSTATE xxxxx)". The server's primary message is
// kept only for classes whose messages name objects, not values: a data exception (22)
// quotes the offending input and an integrity violation's detail quotes the key, either
// of which may be a parameter, so those say their condition and constraint instead.
Status StatusFromServerError(std::string_view purpose, std::string_view sqlstate, std::string_view primary_message,
                             std::string_view constraint_name);

}  // namespace gpufed::pg
