-- status: one consistent read of a job for --status.
--! KEYS lock state history once?
--! ARGV once_pattern history_count state_pattern
-- once_pattern: SCAN MATCH for every once record of the job; state_pattern:
-- SCAN MATCH for every job's state record under the prefix (--list's).
-- Returns {lock_value|false, pttl, state(HGETALL), history(XREVRANGE),
--          stale_once_ids, once(HGETALL)|false, scan_complete (1/0),
--          near, unsettled}
-- near: when the job (or the --once ID) has no record, the keys of the
-- jobs (state_pattern) or the IDs of the job's once records there are, for
-- "did you mean"; else empty. unsettled: {id, status, ...} of the job's
-- once records that are not settled (failed, timeout, lost, abandoned,
-- another status, or running with no lock held; not succeeded nor cleared
-- by --resolve clear), at most 100.
-- Both SCANs are bounded (50 steps of COUNT 1000; 200 names), so a large
-- keyspace cannot make this script block the server.
local lock, statek, histk, oncek = KEYS[KEY_LOCK], KEYS[KEY_STATE], KEYS[KEY_HISTORY], KEYS[KEY_ONCE]
local holder = redis.call('GET', lock)
local pttl = redis.call('PTTL', lock)
local state = redis.call('HGETALL', statek)
local hist = redis.call('XREVRANGE', histk, '+', '-', 'COUNT', tonumber(ARGV[ARG_HISTORY_COUNT]))
local once = false
if oncek then once = redis.call('HGETALL', oncek) end
local want_ids = oncek and #once == 0
-- Once records left 'abandoned', or still 'running' with no lock held;
-- and every one not settled.
local stale, unsettled, ids = {}, {}, {}
local cursor = '0'
local steps = 0
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[ARG_ONCE_PATTERN], 'COUNT', 1000)
  cursor = r[1]
  steps = steps + 1
  for _, k in ipairs(r[2]) do
    local s = redis.call('HGET', k, 'status')
    local id = redis.call('HGET', k, 'once') or k
    if s == 'abandoned' or (s == 'running' and not holder) then
      table.insert(stale, id)
    end
    if s and s ~= 'succeeded' and s ~= 'cleared' and (s ~= 'running' or not holder)
       and #unsettled < 200 then
      table.insert(unsettled, id)
      table.insert(unsettled, s == 'running' and 'abandoned' or s)
    end
    if want_ids and #ids < 200 then table.insert(ids, id) end
  end
until cursor == '0' or #stale >= 100 or steps >= 50
local complete = cursor == '0'
local near = ids
if #state == 0 and not oncek then
  cursor, steps = '0', 0
  repeat
    local r = redis.call('SCAN', cursor, 'MATCH', ARGV[ARG_STATE_PATTERN], 'COUNT', 1000)
    cursor = r[1]
    steps = steps + 1
    for _, k in ipairs(r[2]) do
      if #near < 200 then table.insert(near, k) end
    end
  until cursor == '0' or #near >= 200 or steps >= 50
end
return {holder, pttl, state, hist, stale, once, complete and 1 or 0, near, unsettled}
