-- flag_queued(key, v, ttl_ms): the state record's field 'queued', '1' when
-- the queue may hold waiters, '' when it is empty (acquire.lua: a run that
-- does not wait reads the queue only on '1'). A record it makes (none was
-- there: a holder that writes none, a first run's give-back) gets the
-- job's retention, ttl_ms, like every key of the job: none is left for
-- ever. Every record acquire.lua writes has the field, so the expiry is
-- looked at only when the field is new (HSET says 1): no extra command on
-- the way of a waiter. Included by acquire.lua and release.lua ("--@ include
-- flag_queued"), joined into one line: no comment may follow code here.
local function flag_queued(key, v, ttl)
  if redis.call('HSET', key, 'queued', v) == 1 and redis.call('PTTL', key) == -1 then
    redis.call('PEXPIRE', key, ttl)
  end
end
