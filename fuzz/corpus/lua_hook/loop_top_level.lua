-- Hostile: an infinite loop at the top level must fail the load, not hang it
-- expect: load-error
-- expect-kind: budget
-- expect-message: instruction budget
-- normal: no
-- expect-line: 9

function admit(w) return true end
while true do end
