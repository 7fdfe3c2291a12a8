-- resolve: the operator's verdict on an abandoned (or any finished) record.
--! KEYS lock record history
--! ARGV action host pid once state_ttl_ms
-- action: succeeded|clear|retry; host, pid: the operator's (host as
-- user@host); once: the --once ID. retry allows the ID one more attempt
-- (acquire.lua): the record stays as it is, with 'retry' = 1 until the
-- next attempt takes the lock. clear sets the record aside ('cleared': the
-- next run proceeds, an --once ID with its attempts counted afresh); no
-- kind deletes it, so the last success and the job's place in --list stay.
-- Every kind records who (resolved_by), what (resolved, resolved_from) and
-- when (resolved_ms) in the record.
-- state_ttl_ms: --state-ttl, the expiry of a history this script creates.
-- Returns {'OK', previous status} or {'RUNNING'} when the job holds the lock
-- right now, or {'NONE'} when there is no record, or {'SUCCEEDED'} for a
-- retry of an ID that succeeded (nothing to retry).
local lock, rec, histk = KEYS[KEY_LOCK], KEYS[KEY_RECORD], KEYS[KEY_HISTORY]
local action, by = ARGV[ARG_ACTION], ARGV[ARG_HOST] .. ':' .. ARGV[ARG_PID]
local s = redis.call('HGET', rec, 'status')
if not s then return {'NONE'} end
if s == 'running' and redis.call('EXISTS', lock) == 1 then return {'RUNNING'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local r = redis.call('HMGET', rec, 'host', 'pid', 'fence', 'started_ms')
if action == 'retry' and s == 'succeeded' then return {'SUCCEEDED'} end
local from = s == 'running' and 'abandoned' or s
redis.call('HSET', rec, 'resolved', action, 'resolved_by', by, 'resolved_ms', now,
           'resolved_from', from)
if action == 'clear' then
  redis.call('HSET', rec, 'status', 'cleared')
  if ARGV[ARG_ONCE] ~= '' then redis.call('HSET', rec, 'attempts', '0', 'retry', '') end
elseif action == 'retry' then
  redis.call('HSET', rec, 'retry', '1')
else
  redis.call('HSET', rec, 'status', 'succeeded', 'last_success_ms', now,
             'last_success_fence', r[3] or '', 'last_success_host', r[1] or '')
end
redis.call('XADD', histk, 'MAXLEN', '~', 1000, '*', 'status',
           action == 'clear' and 'cleared' or action == 'retry' and 'retry-allowed'
             or 'resolved-succeeded',
           'exit_code', '', 'signal', '', 'host', r[1] or '', 'pid', r[2] or '',
           'fence', r[3] or '', 'once', ARGV[ARG_ONCE], 'started_ms', r[4] or now,
           'finished_ms', now, 'duration_ms', 0, 'wait_ms', '',
           'by', by, 'from', from)
if redis.call('PTTL', histk) == -1 then redis.call('PEXPIRE', histk, ARGV[ARG_STATE_TTL_MS]) end
return {'OK', s}
