-- fence: raise a master's fencing counter to at least the given fence, so
-- that the next holder's quorum, which shares a master with ours, draws a
-- larger one; and give our run's records on this master that fence (the
-- state record of the slot our token holds, the --once record), which
-- acquire.lua wrote with this master's own, smaller, draw: --status, the
-- history and --release --fence then show the fence the command was given,
-- on every master alike.
--! KEYS fence state once?
--! ARGV fence keep_ms token limit
-- keep_ms: --state-ttl + the lease, the counter's expiry (acquire.lua's);
-- state: slot 1's record (--limit N: slot K's is state:K).
local c = tonumber(redis.call('GET', KEYS[KEY_FENCE]) or '0') or 0
if c < tonumber(ARGV[ARG_FENCE]) then
  redis.call('SET', KEYS[KEY_FENCE], ARGV[ARG_FENCE], 'PX', ARGV[ARG_KEEP_MS])
end
local token = ARGV[ARG_TOKEN]
for i = 1, tonumber(ARGV[ARG_LIMIT]) or 1 do
  local k = KEYS[KEY_STATE]
  if i > 1 then k = k .. ':' .. i end
  if redis.call('HGET', k, 'token') == token then
    redis.call('HSET', k, 'fence', ARGV[ARG_FENCE])
    break
  end
end
if KEYS[KEY_ONCE] and redis.call('HGET', KEYS[KEY_ONCE], 'token') == token then
  redis.call('HSET', KEYS[KEY_ONCE], 'fence', ARGV[ARG_FENCE])
end
return 1
