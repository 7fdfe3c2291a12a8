-- renew: extend our own lock; never creates it (no SET NX on extend).
--! KEYS lock state fence once?
--! ARGV token ttl_ms once_ttl_ms
-- once_ttl_ms is --state-ttl + the lease: our records must outlive the run
-- (a run longer than --state-ttl must not lose them mid-way), so every
-- renewal pushes the expiry of the state record, the fence and the once
-- record out again; release.lua sets --state-ttl at the end.
-- Returns 1 when extended, 0 when the lock is gone or holds another token,
-- or {0, by} when an operator's --release took it (force.lua names itself,
-- user@host:pid, in our record's field revoked_by): the run says who.
local token = ARGV[ARG_TOKEN]
local function lost()
  local r = redis.call('HMGET', KEYS[KEY_STATE], 'token', 'revoked_by')
  if r[1] == token and r[2] then return {0, r[2]} end
  return 0
end
--mutant renew_any_token: if redis.call('EXISTS', KEYS[KEY_LOCK]) == 0 then return lost() end
if redis.call('GET', KEYS[KEY_LOCK]) ~= token then return lost() end
redis.call('PEXPIRE', KEYS[KEY_LOCK], ARGV[ARG_TTL_MS])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('PEXPIRE', KEYS[KEY_FENCE], ARGV[ARG_ONCE_TTL_MS])
for _, i in ipairs({KEY_STATE, KEY_ONCE}) do
  if KEYS[i] and redis.call('HGET', KEYS[i], 'token') == token then
    redis.call('HSET', KEYS[i], 'heartbeat_ms', now)
    redis.call('PEXPIRE', KEYS[i], ARGV[ARG_ONCE_TTL_MS])
  end
end
return 1
