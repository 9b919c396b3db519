--[[
  Moves the epoch counter past a floor seen in the database (after Redis lost its data).
  KEYS[1]  epoch counter
  ARGV[1]  floor
  Returns: the counter after the call
]]
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if current < floor then
  redis.call('SET', KEYS[1], floor)
  return floor
end
return current
