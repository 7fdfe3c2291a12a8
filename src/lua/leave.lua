-- leave: a waiter gives up its place (its --wait ran out, or a signal).
--! KEYS queue waiter_key
--! ARGV waiter waiter_prefix wake_prefix sharded
-- waiter_key: ours (q:WAITER); waiter: our id; sharded: 1, SPUBLISH (on a
-- cluster).
-- If we were first in line, the lock may be free and waiting for us: the
-- next live waiter is woken instead (one message, O(1)).
-- Returns 1 if we were queued, else 0.
local queuek, qkey = KEYS[KEY_QUEUE], KEYS[KEY_WAITER_KEY]
local wid, qpre, wakepre = ARGV[ARG_WAITER], ARGV[ARG_WAITER_PREFIX], ARGV[ARG_WAKE_PREFIX]
-- SPUBLISH on a Cluster; a Redis 6.x Cluster has none: PUBLISH, heard on
-- every node (its waiters SUBSCRIBE there: cluster.c).
local function publish(ch, m)
  local r = ARGV[ARG_SHARDED] == '1' and redis.pcall('SPUBLISH', ch, m)
  if type(r) ~= 'number' then redis.call('PUBLISH', ch, m) end
end
-- The first live waiter; the dead entries before it are dropped, 64 at a
-- time (ZRANGE, MGET of their q: keys, ZREM), at most 4096 per call. A
-- waiter heard listening (a q: value other than '1': acquire.lua) that no
-- longer listens on its channel is dead too.
local function first_live()
  for _ = 1, 64 do
    local ids = redis.call('ZRANGE', queuek, 0, 63)
    if #ids == 0 then return nil end
    local keys, dead, chk, at = {}, {}, {}, {}
    for i, id in ipairs(ids) do keys[i] = qpre .. id end
    local alive = redis.call('MGET', unpack(keys))
    for i, id in ipairs(ids) do
      if alive[i] and alive[i] ~= '1' then chk[#chk + 1] = wakepre .. id; at[#at + 1] = i end
    end
    -- (An ACL without PUBSUB: nobody is heard, as acquire.lua does.)
    local r = #chk > 0 and redis.pcall('PUBSUB', 'NUMSUB', unpack(chk))
    if r and not r.err then
      local sh = ARGV[ARG_SHARDED] == '1' and redis.pcall('PUBSUB', 'SHARDNUMSUB', unpack(chk))
      for j, i in ipairs(at) do
        local n = tonumber(r[2 * j]) + (sh and not sh.err and tonumber(sh[2 * j]) or 0)
        if n == 0 then alive[i] = false end
      end
    end
    for i, id in ipairs(ids) do
      if alive[i] then break end
      dead[#dead + 1] = id
    end
    if #dead > 0 then redis.call('ZREM', queuek, unpack(dead)) end
    if #dead < #ids then return ids[#dead + 1] end
  end
  return nil
end
local first = redis.call('ZRANGE', queuek, 0, 0)[1]
local was = redis.call('ZREM', queuek, wid)
redis.call('DEL', qkey)
if first == wid then
  local h = first_live()
  if h then publish(wakepre .. h, '1') end
end
return was
