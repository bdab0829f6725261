-- Hostile: loading a module
-- expect: load-error
-- expect-kind: load
-- expect-message: global 'require'
-- normal: no
-- expect-line: 8

local os = require("os")
function admit(w) return true end
