--[[
  Gives a pin up: the address leaves the process's set of pins, and the pin key is deleted only
  if it is still ours (a newer claim elsewhere keeps it).
  KEYS[1]  pin key
  KEYS[2]  the releasing process's set of pinned addresses
  ARGV[1]  the value the pin key must have
  ARGV[2]  the address
  Returns: 1 when the pin key was deleted, 0 when it belonged to someone else
]]
redis.call('SREM', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
