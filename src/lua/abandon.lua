-- abandon: mark the records that are 'running' while nobody holds the lock
-- as abandoned, with one history entry per dead run. acquire.lua only
-- reports such records (with several masters, one that lost a live run's
-- key sees the same thing); lock.c sends this after an acquisition round
-- that no master answered BUSY, to the masters that reported one.
--! KEYS lock state history once?
-- Returns the number of history entries added.
local lock, statek, histk, oncek = KEYS[KEY_LOCK], KEYS[KEY_STATE], KEYS[KEY_HISTORY], KEYS[KEY_ONCE]
if redis.call('EXISTS', lock) == 1 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local added = 0
local seen = {}
for _, key in ipairs({statek, oncek}) do
  local r = redis.call('HMGET', key, 'status', 'token', 'host', 'pid', 'fence',
                       'once', 'started_ms', 'heartbeat_ms')
  if r[1] == 'running' then
    redis.call('HSET', key, 'status', 'abandoned', 'finished_ms', r[8] or now)
    if not seen[r[2] or ''] then
      seen[r[2] or ''] = true
      added = added + 1
      local st = tonumber(r[7]) or now
      local hb = tonumber(r[8]) or st
      redis.call('XADD', histk, 'MAXLEN', '~', 1000, '*', 'status', 'abandoned',
                 'exit_code', '', 'signal', '', 'host', r[3] or '', 'pid', r[4] or '',
                 'fence', r[5] or '', 'once', r[6] or '', 'started_ms', st,
                 'finished_ms', hb, 'duration_ms', hb - st, 'wait_ms', '')
    end
  end
end
return added
