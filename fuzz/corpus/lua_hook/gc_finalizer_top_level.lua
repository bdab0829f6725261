-- Hostile: a __gc finalizer registered while loading
-- expect: load-error
-- expect-kind: load
-- expect-message: __gc
-- normal: no
-- expect-line: 8

local keep = setmetatable({}, {__gc = function() while true do end end})
function admit(w) return true end
