-- qstatus: the holders of every --limit slot (1..N) and the queue, for --status.
--! KEYS lock state queue
--! ARGV waiter_prefix max_slot
-- max_slot: the highest --limit slot to look at.
-- Returns {{slot, pttl, host, pid, fence}..., }, {{waiter, ticket, pttl}...}
-- (at most 100 queue entries; dead ones show pttl -2).
local lock, statek, queuek = KEYS[KEY_LOCK], KEYS[KEY_STATE], KEYS[KEY_QUEUE]
local holders = {}
local function slotkey(k, i)
  if i == 1 then return k end
  return k .. ':' .. i
end
for i = 1, tonumber(ARGV[ARG_MAX_SLOT]) do
  local p = redis.call('PTTL', slotkey(lock, i))
  if p ~= -2 then
    local tok = redis.call('GET', slotkey(lock, i))
    local h = redis.call('HMGET', slotkey(statek, i), 'token', 'host', 'pid', 'fence')
    if h[1] ~= tok then h = {false, false, false, false} end
    holders[#holders + 1] = {i, p, h[2] or '', h[3] or '', h[4] or ''}
  end
end
local q = {}
local r = redis.call('ZRANGE', queuek, 0, 99, 'WITHSCORES')
for i = 1, #r, 2 do
  q[#q + 1] = {r[i], r[i + 1], redis.call('PTTL', ARGV[ARG_WAITER_PREFIX] .. r[i])}
end
return {holders, q}
