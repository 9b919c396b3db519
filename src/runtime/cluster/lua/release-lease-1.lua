--[[
  Compare-and-delete: gives a lease (or a pin) up only if it is still ours.
  KEYS[1]  lease or pin key
  ARGV[1]  the value it must have
  Returns: 1 when deleted, 0 when it belonged to someone else
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
