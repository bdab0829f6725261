-- A hook global that is not a function.
local limit = 4

admit = limit
