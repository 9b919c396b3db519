--[[
  Announces a process as a live member and returns the live members.
  KEYS[1]  members sorted set (member = process id, score = expiry in ms, Redis clock)
  ARGV[1]  process id
  ARGV[2]  time to live in ms
  Returns: array of live process ids
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[1] ~= '' then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
end
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')
