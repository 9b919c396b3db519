--[[
  Claims a pinned actor for a process; the newest claim wins. The address joins the claiming
  process's set of pins, which another process takes when this one dies without releasing them.
  KEYS[1]  pin key (value "<process id>|<epoch>")
  KEYS[2]  epoch counter
  KEYS[3]  the claiming process's set of pinned addresses
  ARGV[1]  process id
  ARGV[2]  the address
  Returns: { new epoch, previous value or '' }
]]
local epoch = redis.call('INCR', KEYS[2])
local previous = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. epoch)
redis.call('SADD', KEYS[3], ARGV[2])
if not previous then
  previous = ''
end
return { epoch, previous }
