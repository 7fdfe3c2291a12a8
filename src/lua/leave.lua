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
local publish = ARGV[ARG_SHARDED] == '1' and 'SPUBLISH' or 'PUBLISH'
local first = redis.call('ZRANGE', queuek, 0, 0)[1]
local was = redis.call('ZREM', queuek, wid)
redis.call('DEL', qkey)
if first == wid then
  for _ = 1, 100 do
    local h = redis.call('ZRANGE', queuek, 0, 0)[1]
    if not h then break end
    if redis.call('EXISTS', qpre .. h) == 1 then
      redis.call(publish, wakepre .. h, '1')
      break
    end
    redis.call('ZREM', queuek, h)
  end
end
return was
