-- renew: extend our own lock; never creates it (no SET NX on extend).
-- KEYS: lock, state[, once]   ARGV: token, ttl_ms, once_ttl_ms
-- once_ttl_ms is --state-ttl + the lease: our once record must outlive the
-- run (a run longer than --state-ttl must not lose it mid-way), so every
-- renewal pushes its expiry out again; release.lua sets --state-ttl at the end.
-- Returns 1 when extended, 0 when the lock is gone or holds another token.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #KEYS do
  if redis.call('HGET', KEYS[i], 'token') == ARGV[1] then
    redis.call('HSET', KEYS[i], 'heartbeat_ms', now)
    if i == 3 then redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
  end
end
return 1
