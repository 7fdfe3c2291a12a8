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
--@ include listeners
--@ include first_live
local first = redis.call('ZRANGE', queuek, 0, 0)[1]
local was = redis.call('ZREM', queuek, wid)
redis.call('DEL', qkey)
if first == wid then
  local h = first_live(queuek, qpre, wakepre, ARGV[ARG_SHARDED] == '1')
  if h then publish(wakepre .. h, '1') end
end
return was
