-- force: the operator's --release. Deletes the lock whatever its token,
-- records that in history and wakes waiters. The holder, if alive, finds
-- its token gone at the next renewal and stops its child.
--! KEYS lock state history
--! ARGV channel host pid sharded
-- host, pid: the operator's; sharded: 1, SPUBLISH (on a cluster).
-- Returns {removed token|false, pttl, host, pid, fence}
local lock, statek, histk = KEYS[KEY_LOCK], KEYS[KEY_STATE], KEYS[KEY_HISTORY]
local holder = redis.call('GET', lock)
if not holder then return {false, -2, '', '', ''} end
local pttl = redis.call('PTTL', lock)
redis.call('DEL', lock)
local h = redis.call('HMGET', statek, 'token', 'host', 'pid', 'fence', 'once')
if h[1] ~= holder then h = {false, false, false, false, false} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('XADD', histk, 'MAXLEN', '~', 1000, '*', 'status', 'released',
           'exit_code', '', 'signal', '', 'host', h[2] or '', 'pid', h[3] or '',
           'fence', h[4] or '', 'once', h[5] or '', 'started_ms', now,
           'finished_ms', now, 'duration_ms', 0, 'wait_ms', '',
           'by', ARGV[ARG_HOST] .. ':' .. ARGV[ARG_PID])
-- Wake waiters with the removed holder's fence (if known), never its token.
redis.call(ARGV[ARG_SHARDED] == '1' and 'SPUBLISH' or 'PUBLISH', ARGV[ARG_CHANNEL], h[4] or '')
return {holder, pttl, h[2] or '', h[3] or '', h[4] or ''}
