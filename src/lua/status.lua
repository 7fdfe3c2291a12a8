-- status: one consistent read of a job for --status.
--! KEYS lock state history once?
--! ARGV once_pattern history_count
-- once_pattern: SCAN MATCH for every once record of the job.
-- Returns {lock_value|false, pttl, state(HGETALL), history(XREVRANGE),
--          stale_once_ids, once(HGETALL)|false, scan_complete (1/0)}
-- The SCAN for once records is bounded (50 steps of COUNT 1000), so a large
-- keyspace cannot make this script block the server.
local lock, statek, histk, oncek = KEYS[KEY_LOCK], KEYS[KEY_STATE], KEYS[KEY_HISTORY], KEYS[KEY_ONCE]
local holder = redis.call('GET', lock)
local pttl = redis.call('PTTL', lock)
local state = redis.call('HGETALL', statek)
local hist = redis.call('XREVRANGE', histk, '+', '-', 'COUNT', tonumber(ARGV[ARG_HISTORY_COUNT]))
-- Once records left 'abandoned', or still 'running' with no lock held.
local stale = {}
local cursor = '0'
local steps = 0
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[ARG_ONCE_PATTERN], 'COUNT', 1000)
  cursor = r[1]
  steps = steps + 1
  for _, k in ipairs(r[2]) do
    local s = redis.call('HGET', k, 'status')
    if s == 'abandoned' or (s == 'running' and not holder) then
      table.insert(stale, redis.call('HGET', k, 'once') or k)
    end
  end
until cursor == '0' or #stale >= 100 or steps >= 50
local once = false
if oncek then once = redis.call('HGETALL', oncek) end
return {holder, pttl, state, hist, stale, once, cursor == '0' and 1 or 0}
