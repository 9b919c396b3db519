--[[
  Re-asserts the pins a process holds after Redis was unreachable (or restarted empty), in one
  round trip. A pin whose key is missing, still ours, or holds an older epoch is written again;
  a pin claimed meanwhile with a newer epoch is lost. The epoch counter is moved past every epoch
  re-asserted, so that later claims stay ahead of them (and of the database fences).
  KEYS[1 .. #KEYS - 1]  pin keys (value "<process id>|<epoch>")
  KEYS[#KEYS]           epoch counter
  ARGV[i]               the value each pin should have
  ARGV[#KEYS - 1 + i]   the epoch of that value
  Returns: array, 1 where the pin is ours, 0 where a newer claim holds it
]]
local n = #KEYS - 1
local out = {}
local highest = 0
for i = 1, n do
  local mine = tonumber(ARGV[n + i])
  local current = redis.call('GET', KEYS[i])
  local theirs = 0
  if current and current ~= ARGV[i] then
    theirs = tonumber(string.match(current, '|(%d+)$') or '0')
  end
  if theirs > mine then
    out[i] = 0
  else
    if current ~= ARGV[i] then
      redis.call('SET', KEYS[i], ARGV[i])
    end
    if mine > highest then
      highest = mine
    end
    out[i] = 1
  end
end
local counter = tonumber(redis.call('GET', KEYS[#KEYS]) or '0')
if counter < highest then
  redis.call('SET', KEYS[#KEYS], highest)
end
return out
