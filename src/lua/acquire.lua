-- acquire: take the lock if it is free and the job's records allow a run.
-- KEYS: lock, fence, state, history, void (the tombstone of this attempt's
--       token), [once]
-- ARGV: token, ttl_ms, host, pid, once_id, refuse_stale (1/0),
--       once_ttl_ms (--state-ttl + the lease: renew.lua keeps extending it,
--       so the once record outlives the run), fence_floor (the acquiring
--       host's clock in ms)
-- Returns {'VOID'} if this attempt was already given back
--      or {'OK', fence, started_ms, abandoned, history id...}
--      or {'BUSY', pttl_ms, host, pid, fence}
--      or {'DONE', host, pid, fence, finished_ms, stale (1/0)}
--      or {'STALE', host, pid, fence, heartbeat_ms, key, stale (1/0)}
-- A record still 'running' while this master has no lock belongs to a run
-- that died -- or, with several masters, to a live run whose key this
-- master lost. Only the overall decision can tell, so nothing is written
-- unless we take the lock: DONE and STALE only report such a record
-- (stale = 1; lock.c sends abandon.lua once no master has a holder), and OK
-- adds its 'abandoned' history entries but keeps the record it replaces as
-- it was and returns the entries' ids, so a give-back can undo both.
local lock, fencek, statek, histk, voidk, oncek =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local token, ttl, host, pid = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local once, refuse, once_ttl = ARGV[5], ARGV[6] == '1', ARGV[7]

-- A request that reaches us after its client gave up on it (delayed or
-- retransmitted in the network) must take nothing: the give-back, which
-- came first, left a tombstone for this token.
if redis.call('EXISTS', voidk) == 1 then return {'VOID'} end

local pttl = redis.call('PTTL', lock)
if pttl ~= -2 then
  -- Report the holder only when the state record belongs to the lock's token.
  local holder = redis.call('GET', lock)
  local h = redis.call('HMGET', statek, 'token', 'host', 'pid', 'fence')
  if h[1] ~= holder then h = {false, false, false, false} end
  return {'BUSY', pttl, h[2] or '', h[3] or '', h[4] or ''}
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function status_of(key)
  local s = redis.call('HGET', key, 'status')
  if s == 'running' then return 'abandoned', 1 end
  return s, 0
end
local st, stale = status_of(statek)
local rec = statek
if oncek then
  local s1, stale1 = status_of(oncek)
  st, rec, stale = s1, oncek, math.max(stale, stale1)
end
if st == 'succeeded' and oncek then
  local r = redis.call('HMGET', oncek, 'host', 'pid', 'fence', 'finished_ms')
  return {'DONE', r[1] or '', r[2] or '', r[3] or '', r[4] or '', stale}
end
if st == 'abandoned' and refuse then
  local r = redis.call('HMGET', rec, 'host', 'pid', 'fence', 'heartbeat_ms')
  return {'STALE', r[1] or '', r[2] or '', r[3] or '', r[4] or '', rec, stale}
end

-- We take the lock. A dead run's record gets its history entry (once per
-- run), then is replaced by ours below.
local abandoned = 0
local ids = {}
local seen = {}
local function bury(key)
  local r = redis.call('HMGET', key, 'status', 'token', 'host', 'pid', 'fence',
                       'once', 'started_ms', 'heartbeat_ms')
  if r[1] ~= 'running' or seen[r[2] or ''] then return end
  seen[r[2] or ''] = true
  abandoned = 1
  local st0 = tonumber(r[7]) or now
  local hb = tonumber(r[8]) or st0
  ids[#ids + 1] = redis.call('XADD', histk, 'MAXLEN', '~', 1000, '*', 'status', 'abandoned',
             'exit_code', '', 'signal', '', 'host', r[3] or '', 'pid', r[4] or '',
             'fence', r[5] or '', 'once', r[6] or '', 'started_ms', st0,
             'finished_ms', hb, 'duration_ms', hb - st0, 'wait_ms', '')
end
bury(statek)
if oncek then bury(oncek) end

redis.call('SET', lock, token, 'PX', ttl)
-- The fencing token never goes below the acquiring host's clock in ms, so it
-- keeps increasing even if the counter is lost (a restart without
-- persistence). The floor comes from the client, not from TIME, so that all
-- masters of a quorum usually agree on the same value.
local fence = redis.call('INCR', fencek)
local floor = tonumber(ARGV[8]) or 0
if fence < floor then
  fence = floor
  redis.call('SET', fencek, fence)
end
local fields = {'status', 'running', 'host', host, 'pid', pid, 'fence', fence,
                'token', token, 'started_ms', now, 'heartbeat_ms', now,
                'finished_ms', '', 'exit_code', '', 'signal', '', 'once', once}
-- The record we replace is kept, serialised and unchanged, in field 'prev'
-- until our run ends, so that giving back a partial acquisition can put it
-- back.
local function replace(key)
  redis.call('HDEL', key, 'prev')   -- one level back is all we need
  local old = redis.call('DUMP', key)
  redis.call('DEL', key)
  redis.call('HSET', key, unpack(fields))
  if old then redis.call('HSET', key, 'prev', old) end
end
replace(statek)
if oncek then
  replace(oncek)
  redis.call('PEXPIRE', oncek, once_ttl)
end
return {'OK', fence, now, abandoned, unpack(ids)}
