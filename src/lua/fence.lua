-- fence: raise a master's fencing counter to at least the given fence, so
-- that the next holder's quorum, which shares a master with ours, draws a
-- larger one.
--! KEYS fence
--! ARGV fence keep_ms
-- keep_ms: --state-ttl + the lease, the counter's expiry (acquire.lua's).
local c = tonumber(redis.call('GET', KEYS[KEY_FENCE]) or '0') or 0
if c < tonumber(ARGV[ARG_FENCE]) then
  redis.call('SET', KEYS[KEY_FENCE], ARGV[ARG_FENCE], 'PX', ARGV[ARG_KEEP_MS])
end
return 1
