-- abandon: mark the records that are 'running' while nobody holds the lock
-- as abandoned, with one history entry per dead run. acquire.lua only
-- reports such records (with several masters, one that lost a live run's
-- key sees the same thing); lock.c sends this after an acquisition round
-- that no master answered BUSY, to the masters that reported one.
--! KEYS lock state history queue once?
--! ARGV limit state_ttl_ms waiter waiter_prefix wake_prefix sharded
-- lock, state: slot 1's keys; with --limit N (limit) slot K's are lock:K and
-- state:K, and every slot is looked at: the dead run acquire.lua reported
-- may be in any slot, whoever holds the others. state_ttl_ms: --state-ttl,
-- how long the history is kept after an entry is added. waiter: our waiter
-- id ('' none); sharded: 1, SPUBLISH (on a cluster).
-- The run that sends this takes no slot (DONE or STALE): once the records
-- are marked, the first live waiter other than us is woken for a free slot
-- (acquire.lua leaves that to us here: a waiter woken before the marks could
-- take the lock first, and a record it does not replace, such as this --once
-- ID's, would stay 'running').
-- Returns the number of history entries added.
local lock, statek, histk = KEYS[KEY_LOCK], KEYS[KEY_STATE], KEYS[KEY_HISTORY]
local queuek, oncek = KEYS[KEY_QUEUE], KEYS[KEY_ONCE]
local limit = tonumber(ARGV[ARG_LIMIT]) or 1
local wid = ARGV[ARG_WAITER] or ''
-- SPUBLISH on a Cluster; a Redis 6.x Cluster has none: PUBLISH, heard on
-- every node (its waiters SUBSCRIBE there: cluster.c).
local function publish(ch, m)
  local r = ARGV[ARG_SHARDED] == '1' and redis.pcall('SPUBLISH', ch, m)
  if type(r) ~= 'number' then redis.call('PUBLISH', ch, m) end
end
--@ include listeners
--@ include first_live
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local added = 0
local seen = {}
local function mark(key)
  local r = redis.call('HMGET', key, 'status', 'token', 'host', 'pid', 'fence',
                       'once', 'started_ms', 'heartbeat_ms')
  if r[1] ~= 'running' then return end
  redis.call('HSET', key, 'status', 'abandoned', 'finished_ms', r[8] or now)
  if seen[r[2] or ''] then return end
  seen[r[2] or ''] = true
  added = added + 1
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
local free = false
for i = 1, limit do
  if redis.call('EXISTS', slotkey(lock, i)) == 0 then
    free = true
    mark(slotkey(statek, i))
    -- A once record belongs to slot 1 (--once excludes --limit).
    if i == 1 and oncek then mark(oncek) end
  end
end
if free then
  -- We are done waiting: our entry goes, and the next live waiter is told.
  if wid ~= '' then redis.call('ZREM', queuek, wid) end
  local h = first_live(queuek, ARGV[ARG_WAITER_PREFIX], ARGV[ARG_WAKE_PREFIX],
                       ARGV[ARG_SHARDED] == '1')
  if h then publish(ARGV[ARG_WAKE_PREFIX] .. h, '1') end
end
return added
