-- qstatus: the holders of every --limit slot and the queue, for --status
-- and --list; and when the job's keys expire.
--! KEYS lock state queue fence history qseq
--! ARGV waiter_prefix max_slot queue_max
-- max_slot: the highest --limit slot there may be. The slots looked at are
-- 1..N, N the --limit slot 1's record was admitted with (acquire.lua writes
-- it on every run, and refuses another N while any slot is held), so a
-- plain job costs one PTTL, not max_slot. A record that does not say (an
-- older version's) costs one EXISTS of slots 2..max_slot, and a walk of
-- them only if one is held. queue_max: queue entries to return (0: none).
-- Returns {{{slot, pttl, host, pid, fence}...}, {{waiter, ticket, pttl}...},
--          keys_pttl}
-- (dead queue entries show pttl -2); keys_pttl: when the last of the job's
-- keys (state records, fence, history, queue) expires, in ms from now; -1
-- when one of them has no expiry (written by an older version), -2 when
-- there are none.
local lock, statek, queuek = KEYS[KEY_LOCK], KEYS[KEY_STATE], KEYS[KEY_QUEUE]
local holders = {}
local function slotkey(k, i)
  if i == 1 then return k end
  return k .. ':' .. i
end
local top = tonumber(ARGV[ARG_MAX_SLOT]) or 1
local n = tonumber(redis.call('HGET', statek, 'limit'))
if not n and top > 1 then
  local rest = {}
  for i = 2, top do rest[#rest + 1] = slotkey(lock, i) end
  n = redis.call('EXISTS', unpack(rest)) > 0 and top or 1
end
n = math.max(1, math.min(n or 1, top))
local keys_pttl = -2
local function expires(key)
  local p = redis.call('PTTL', key)
  if p == -1 or keys_pttl == -1 then keys_pttl = -1
  elseif p > keys_pttl then keys_pttl = p end
end
for i = 1, n do
  local p = redis.call('PTTL', slotkey(lock, i))
  if p ~= -2 then
    local tok = redis.call('GET', slotkey(lock, i))
    local h = redis.call('HMGET', slotkey(statek, i), 'token', 'host', 'pid', 'fence')
    if h[1] ~= tok then h = {false, false, false, false} end
    holders[#holders + 1] = {i, p, h[2] or '', h[3] or '', h[4] or ''}
  end
  if i > 1 then expires(slotkey(statek, i)) end
end
for _, key in ipairs({statek, KEYS[KEY_FENCE], KEYS[KEY_HISTORY], queuek, KEYS[KEY_QSEQ]}) do
  expires(key)
end
local q = {}
local qmax = tonumber(ARGV[ARG_QUEUE_MAX]) or 0
if qmax > 0 then
  local r = redis.call('ZRANGE', queuek, 0, qmax - 1, 'WITHSCORES')
  for i = 1, #r, 2 do
    q[#q + 1] = {r[i], r[i + 1], redis.call('PTTL', ARGV[ARG_WAITER_PREFIX] .. r[i])}
  end
end
return {holders, q, keys_pttl}
