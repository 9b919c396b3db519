--[[
  Takes a free shard lease with a fresh epoch.
  KEYS[1]  lease key (value "<process id>|<epoch>")
  KEYS[2]  epoch counter
  ARGV[1]  process id
  ARGV[2]  time to live in ms
  Returns: the new epoch, or 0 when another process holds the lease
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. epoch, 'PX', ARGV[2])
return epoch
