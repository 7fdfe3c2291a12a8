-- release: after the child was reaped. Deletes the lock only if it is ours
-- (or shortens it to the rest of --min-hold), writes the final status only
-- into records that still carry our token, appends history, wakes waiters.
--! KEYS lock state history void queue once?
--! ARGV token status exit_code signal hold_ms wait_ms channel host pid
--! ARGV fence once started_ms state_ttl_ms void_ms stands waiter
--! ARGV waiter_prefix wake_prefix limit slot sharded masters_ok masters_total
--! ARGV masters_failed history_id...
-- lock, state: slot 1's keys (--limit N: slot K is lock:K, state:K);
-- slot: the slot we hold, 0 when we do not know: a give-back, whose
-- acquire may have taken any free slot (its reply may have been lost), so
-- the slot whose lock or record carries our token is found here.
-- void: our token's tombstone; stands: 1/0; waiter: our waiter id ('');
-- sharded: 1, SPUBLISH (on a cluster); masters_ok, masters_total: how many
-- masters the acquire reached, of how many; masters_failed: the others and
-- why ('' when none failed), for --status; history_id...: the entries to undo.
-- A release that frees the lock wakes the next live waiter only (its own
-- channel wake:WAITER), so a handoff costs O(1) whatever the queue's length.
-- void_ms > 0: our acquire request to this master was never answered (it
-- timed out or its connection broke), so it may still arrive; a tombstone
-- kept void_ms makes acquire.lua refuse it then.
-- status '' means an aborted acquisition: the records we replaced are put
-- back (or ours removed), no history. acquire.lua kept them as they were,
-- even one 'running' with no lock, for which it added an 'abandoned' entry:
-- with stands = 1 (the round had a quorum, so that run is dead) the
-- restored record is marked abandoned to match; with 0 (no quorum: the run
-- may be alive on other masters) the entries, by id, are deleted: the ids
-- our record keeps in 'buried' (a lost reply told the client none) and
-- those the client passes.
-- Returns {released (1/0), state_written (1/0)}
local lock, statek, histk = KEYS[KEY_LOCK], KEYS[KEY_STATE], KEYS[KEY_HISTORY]
local voidk, queuek, oncek = KEYS[KEY_VOID], KEYS[KEY_QUEUE], KEYS[KEY_ONCE]
local wid, qpre = ARGV[ARG_WAITER] or '', ARGV[ARG_WAITER_PREFIX]
local wakepre, limit = ARGV[ARG_WAKE_PREFIX], tonumber(ARGV[ARG_LIMIT]) or 1
local token, status = ARGV[ARG_TOKEN], ARGV[ARG_STATUS]

-- Our slot's keys. The lock may have expired while the record lives on,
-- so either one carrying our token names the slot; none: nothing is ours
-- (slot 1's keys then, which hold another token or nothing).
local function slotkey(k, i)
  if i == 1 then return k end
  return k .. ':' .. i
end
local slot = tonumber(ARGV[ARG_SLOT]) or 0
if slot == 0 and limit > 1 then
  for i = 1, limit do
    if redis.call('GET', slotkey(lock, i)) == token or
       redis.call('HGET', slotkey(statek, i), 'token') == token then
      slot = i
      break
    end
  end
end
if slot > 1 then lock, statek = slotkey(lock, slot), slotkey(statek, slot) end
-- On a cluster the channels are sharded (SPUBLISH): they live on the
-- slot's owner only, where the waiters' SSUBSCRIBE is, not on every node.
-- A Redis 6.x Cluster has none: PUBLISH, heard on every node (its waiters
-- SUBSCRIBE there: cluster.c).
local function publish(ch, m)
  local r = ARGV[ARG_SHARDED] == '1' and redis.pcall('SPUBLISH', ch, m)
  if type(r) ~= 'number' then redis.call('PUBLISH', ch, m) end
end
local queued = false
local code, sig = ARGV[ARG_EXIT_CODE], ARGV[ARG_SIGNAL]
local hold, wait, channel = tonumber(ARGV[ARG_HOLD_MS]), ARGV[ARG_WAIT_MS], ARGV[ARG_CHANNEL]

local void_ms = tonumber(ARGV[ARG_VOID_MS]) or 0
if void_ms > 0 then redis.call('SET', voidk, '1', 'PX', ARGV[ARG_VOID_MS]) end

local released, shortened = 0, false
local cur = redis.call('GET', lock)
if cur == 'revoked:' .. token then
  -- An operator's --release (force.lua) marked our lock: it is freed now.
  redis.call('DEL', lock)
  released = 1
--mutant release_any_token: elseif cur then
elseif cur == token then
  if hold > 0 then
    redis.call('PEXPIRE', lock, hold)
    shortened = true
  else
    redis.call('DEL', lock)
    released = 1
  end
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local started = tonumber(ARGV[ARG_STARTED_MS]) or now
local written = 0
local undo = {}
for i = ARG_HISTORY_ID, #ARGV do undo[#undo + 1] = ARGV[i] end
-- A retried release (the first one's reply was lost, or the cluster
-- refused it for now: run_step.c) must not write twice: a record of ours
-- that no longer says 'running' was written already; 'logged' says the
-- history entry was added too.
local logged, unlogged = false, {}
for _, key in ipairs({statek, oncek}) do
  -- One read of the record: what the branches below need of it.
  local r = redis.call('HMGET', key, 'token', 'status', 'logged', 'prev', 'started_ms', 'queued')
  local tok, st, lg, prev = r[1], r[2], r[3], r[4]
  if key == statek then queued = r[6] == '1' end
  if tok == token and status ~= '' and st ~= 'running' then
    written = 1
    if lg == '1' then logged = true else unlogged[#unlogged + 1] = key end
  elseif tok == token then
    if status == '' then
      if prev and ARGV[ARG_STANDS] == '0' then
        for id in string.gmatch(redis.call('HGET', key, 'buried') or '', '%S+') do
          undo[#undo + 1] = id
        end
      end
      -- An acquisition given back: the record we replaced comes back.
      local ttl = redis.call('PTTL', key)
      if prev then
        redis.call('RESTORE', key, ttl > 0 and ttl or 0, prev, 'REPLACE')
        local r = redis.call('HMGET', key, 'status', 'heartbeat_ms')
        if ARGV[ARG_STANDS] == '1' and r[1] == 'running' then
          redis.call('HSET', key, 'status', 'abandoned', 'finished_ms', r[2] or now)
        end
      else
        redis.call('DEL', key)
      end
    else
      local s = tonumber(r[5])
      if s then started = s end
      local f = {'status', status, 'finished_ms', now, 'heartbeat_ms', now,
                 'exit_code', code, 'signal', sig, 'masters_ok', ARGV[ARG_MASTERS_OK],
                 'masters_total', ARGV[ARG_MASTERS_TOTAL],
                 'masters_failed', ARGV[ARG_MASTERS_FAILED], 'logged', '1'}
      -- Kept across later runs (acquire.lua carries it over) for --status;
      -- in the same HSET, so a run's command count does not grow.
      if status == 'succeeded' then
        f[#f + 1] = 'last_success_ms'; f[#f + 1] = now
        f[#f + 1] = 'last_success_fence'; f[#f + 1] = ARGV[ARG_FENCE]
        f[#f + 1] = 'last_success_host'; f[#f + 1] = ARGV[ARG_HOST]
      end
      redis.call('HSET', key, unpack(f))
      if prev then redis.call('HDEL', key, 'prev', 'buried') end
      -- The once record is kept --state-ttl from the end of the run (while
      -- it ran, renew.lua kept it alive).
      if key == oncek then redis.call('PEXPIRE', key, ARGV[ARG_STATE_TTL_MS]) end
      written = 1
    end
  end
end
if status == '' and ARGV[ARG_STANDS] == '0' then
  for _, id in ipairs(undo) do redis.call('XDEL', histk, id) end
end
-- How many listen on each channel of chs (lib/listeners.lua).
--@ include listeners
--@ include flag_queued
-- The waiters behind the head that become the first NEAR when it takes the
-- lock: one that refreshes rarely (its q: value 'f' and its short TTL:
-- acquire.lua) gets the short TTL back and a message, so that it refreshes
-- now and from then on as often as the head; one that vanished (its host
-- lost, its connection still open) is then dropped as at the head.
local NEAR = 4
-- The head itself may still be far (those ahead of it died at once): it
-- gets the short TTL too; its message is the wake-up.
local function bring_near(ids, v, h)
  local k = 0
  for i = h, #ids do
    if v[i] then
      k = k + 1
      if k > NEAR + 1 then return end
      if string.sub(v[i], 1, 1) == 'f' then
        redis.call('SET', qpre .. ids[i], 's', 'PX', string.sub(v[i], 2), 'XX')
        if i > h then publish(wakepre .. ids[i], '1') end
      end
    end
  end
end
-- The first live waiter; the dead entries before it are dropped, 64 at a
-- time (ZRANGE, MGET of their q: keys, PUBSUB NUMSUB of the channels of
-- those heard listening, ZREM, DEL), at most 4096 per call.
local function first_live()
  for _ = 1, 64 do
    local ids = redis.call('ZRANGE', queuek, 0, 63)
    if #ids == 0 then return nil end
    local keys, dead, dkeys, chk, at = {}, {}, {}, {}, {}
    for i, id in ipairs(ids) do keys[i] = qpre .. id end
    local v = redis.call('MGET', unpack(keys))
    for i, id in ipairs(ids) do
      if v[i] and v[i] ~= '1' then chk[#chk + 1] = wakepre .. id; at[#at + 1] = i end
    end
    local n = listeners(chk, ARGV[ARG_SHARDED] == '1') or {}
    for j, i in ipairs(at) do
      if n[j] == 0 then v[i] = false end
    end
    local h
    for i, id in ipairs(ids) do
      if v[i] then h = i; break end
      dead[#dead + 1] = id
      dkeys[#dkeys + 1] = keys[i]
    end
    if #dead > 0 then
      redis.call('ZREM', queuek, unpack(dead))
      redis.call('DEL', unpack(dkeys))
    end
    if h then
      bring_near(ids, v, h)
      return ids[h]
    end
  end
  return nil
end
-- The queue: a finished run leaves it (with several masters a holder keeps
-- its place until here, so that a give-back does not lose it); a freed
-- lock wakes the first live waiter, and nobody else. So does a lock
-- shortened to the rest of --min-hold: the waiter reads the shorter lease
-- and sleeps until its end, not until its next refresh (up to 3.3 s).
if wid ~= '' and status ~= '' then
  redis.call('ZREM', queuek, wid)
  redis.call('DEL', qpre .. wid)
end
if status == '' and limit == 1 and redis.call('ZCARD', queuek) > 0 then
  flag_queued(statek, '1', ARGV[ARG_STATE_TTL_MS])   -- a restored record lacks it
end
if (released == 1 or shortened) and (queued or limit > 1) then
  local head = first_live()
  if head then
    publish(wakepre .. head, '1')
  elseif limit == 1 and redis.call('EXISTS', queuek) == 0 then
    flag_queued(statek, '', ARGV[ARG_STATE_TTL_MS])
  end
end
if status ~= '' and not logged then
  redis.call('XADD', histk, 'MAXLEN', '~', 1000, '*', 'status', status,
             'exit_code', code, 'signal', sig, 'host', ARGV[ARG_HOST], 'pid', ARGV[ARG_PID],
             'fence', ARGV[ARG_FENCE], 'once', ARGV[ARG_ONCE], 'started_ms', started,
             'finished_ms', now, 'duration_ms', now - started, 'wait_ms', wait)
  -- Capped by age as well as by count: entries older than --state-ttl go,
  -- up to 100 a run (few each time; XTRIM MINID would need Redis 6.2), and
  -- the stream itself goes --state-ttl after the last run, with the job's
  -- other keys.
  local keep = tonumber(ARGV[ARG_STATE_TTL_MS])
  local old = {}
  if now - keep > 0 then
    old = redis.call('XRANGE', histk, '-', string.format('%.0f', now - keep - 1), 'COUNT', 100)
  end
  if #old > 0 then
    local ids = {}
    for i, e in ipairs(old) do ids[i] = e[1] end
    redis.call('XDEL', histk, unpack(ids))
  end
  redis.call('PEXPIRE', histk, keep)
  for _, key in ipairs(unlogged) do redis.call('HSET', key, 'logged', '1') end
end
-- The message only wakes waiters. It carries our fence, never the token:
-- the token is what grants the lock, and any subscriber would learn it.
if released == 1 then publish(channel, ARGV[ARG_FENCE]) end
return {released, written}
