--[[
  Renews the leases a process holds, in one round trip.
  KEYS[i]  lease keys
  ARGV[i]  the value each lease must still have ("<process id>|<epoch>")
  ARGV[#KEYS + 1]  time to live in ms
  Returns: array, 1 where the lease was renewed, 0 where it was lost
]]
local ttl = ARGV[#KEYS + 1]
local out = {}
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i] then
    redis.call('PEXPIRE', KEYS[i], ttl)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
