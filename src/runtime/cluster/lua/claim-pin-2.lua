--[[
  Claims a pinned actor for a process; the newest claim wins.
  KEYS[1]  pin key (value "<process id>|<epoch>")
  KEYS[2]  epoch counter
  ARGV[1]  process id
  Returns: { new epoch, previous value or '' }
]]
local epoch = redis.call('INCR', KEYS[2])
local previous = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. epoch)
if not previous then
  previous = ''
end
return { epoch, previous }
