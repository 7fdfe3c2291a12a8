-- abandon: mark the records that are 'running' while nobody holds the lock
-- (an --once ID's: while its own run does not hold it) as abandoned, with
-- one history entry per dead run. acquire.lua only
-- reports such records (with several masters, one that lost a live run's
-- key sees the same thing); lock.c sends this after an acquisition round
-- that no master answered BUSY, to the masters that reported one.
--! KEYS lock state history once?
--! ARGV limit state_ttl_ms
-- lock, state: slot 1's keys; with --limit N (limit) slot K's are lock:K and
-- state:K, and every slot is looked at: the dead run acquire.lua reported
-- may be in any slot, whoever holds the others. state_ttl_ms: --state-ttl,
-- how long the history is kept after an entry is added.
-- Returns the number of records marked (0: none; lock.c tells the run that
-- a dead run was recorded).
local lock, statek, histk, oncek = KEYS[KEY_LOCK], KEYS[KEY_STATE], KEYS[KEY_HISTORY], KEYS[KEY_ONCE]
local limit = tonumber(ARGV[ARG_LIMIT]) or 1
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local marked = 0
local seen = {}
-- log: add the history entry. A dead run's is written with its state record
-- (here, or by the acquire.lua that buried it), never for its --once record:
-- once was twice (one entry when the state record was marked or buried,
-- one when the --once record was).
local function mark(key, log)
  local r = redis.call('HMGET', key, 'status', 'token', 'host', 'pid', 'fence',
                       'once', 'started_ms', 'heartbeat_ms')
  if r[1] ~= 'running' then return end
  redis.call('HSET', key, 'status', 'abandoned', 'finished_ms', r[8] or now)
  marked = marked + 1
  if not log or seen[r[2] or ''] then return end
  seen[r[2] or ''] = true
  local st = tonumber(r[7]) or now
  local hb = tonumber(r[8]) or st
  redis.call('XADD', histk, 'MAXLEN', '~', 1000, '*', 'status', 'abandoned',
             'exit_code', '', 'signal', '', 'host', r[3] or '', 'pid', r[4] or '',
             'fence', r[5] or '', 'once', r[6] or '', 'started_ms', st,
             'finished_ms', hb, 'duration_ms', hb - st, 'wait_ms', '')
  redis.call('PEXPIRE', histk, ARGV[ARG_STATE_TTL_MS])
end
local function slotkey(k, i)
  if i == 1 then return k end
  return k .. ':' .. i
end
for i = 1, limit do
  if redis.call('EXISTS', slotkey(lock, i)) == 0 then mark(slotkey(statek, i), true) end
end
-- A once record belongs to slot 1 (--once excludes --limit). Its run is
-- dead unless it holds the lock: marked even when another run has taken
-- the lock since the round (a waiter woken by it, a newcomer), which
-- replaced the state record but not this ID's record.
if oncek then
  local o = redis.call('HMGET', oncek, 'status', 'token')
  local v = redis.call('GET', lock)
  if o[1] == 'running' and (not v or (v ~= o[2] and v ~= 'revoked:' .. (o[2] or ''))) then
    mark(oncek, false)
  end
end
return marked
