-- Hostile: poisoning string methods while loading
-- expect: load-error
-- expect-kind: load
-- expect-message: read-only
-- normal: no
-- expect-line: 8

string.upper = function() return "pwned" end
function admit(w) return true end
