-- acquire: take the lock if it is free and the job's records allow a run.
--! KEYS lock fence state history void queue qseq waiter_key once?
--! ARGV token ttl_ms host pid once_id refuse_stale once_ttl_ms fence_floor
--! ARGV waiter queue_ttl_ms ticket limit waiter_prefix keep wake_prefix
--! ARGV sharded contain attempts command
-- void: the tombstone of this attempt's token; waiter_key: ours (q:WAITER).
-- refuse_stale: 1/0; once_ttl_ms: --state-ttl + the lease, the expiry this
-- script gives every key of the job it writes (state, fence, queue, qseq,
-- history, once record; renew.lua keeps extending it, so the records
-- outlive the run); fence_floor: the acquiring host's clock in ms; waiter:
-- our waiter id ('' = --wait 0: never
-- queue); queue_ttl_ms: how long our queue entry lives; ticket: our
-- best-known arrival ticket (0 none); limit: holders at once; keep: 1, stay
-- queued while holding (several masters: a give-back must keep our place);
-- sharded: 1, SPUBLISH (on a cluster); contain: what holds the command's
-- processes, 'cgroup' or 'tree' (--contain), shown by --status;
-- attempts: --attempts N, the attempts an --once ID may have (job.c's
-- rr_job_decide is the reference of the decision below).
-- One --limit per NAME: slot 1's record keeps the N its holders were
-- admitted with (field 'limit', written by every acquire); a run with
-- another N while any slot is held is refused with an error reply
-- 'LIMIT ...' that names both (diag.c: exit 78). A plain run reads the
-- field with the reads it makes anyway.
-- Returns {'VOID'} if this attempt was already given back
--      or {'OK', fence, started_ms, flags, slot, history id...} (flags:
--         1 a dead run recorded abandoned, + 2 the command fingerprint
--         differs from the last run's; the record keeps both: command,
--         command_prev)
--      or {'BUSY', pttl_ms, host, pid, fence, rank, ticket, ahead, since_ms}
--         (rank, ticket: our place in the queue, when we are queued, else
--         -1, 0; ahead: the lock is free, but this many waiters are queued
--         ahead, -1 it is held; since_ms: when the holder took it, '' not
--         known: a run that finds the lock held says for how long, a hung
--         holder shows, with no second round trip)
--      or {'DONE', host, pid, fence, finished_ms, stale (1/0)}
--      or {'STALE', host, pid, fence, when_ms, key, stale (1/0), last,
--          spent (1/0), used, allowed, exit_code, signal, now_ms}: refused,
--          the last attempt's status (last), when it ended or was last
--          seen, whether the --once ID's attempt budget is spent (1) or a
--          dead run is refused by --on-stale refuse (0), and this server's
--          TIME (the refusal says how long ago on it, not on the host's
--          clock, which may be skewed).
-- A record still 'running' while this master has no lock belongs to a run
-- that died -- or, with several masters, to a live run whose key this
-- master lost. Only the overall decision can tell, so nothing is written
-- unless we take the lock: DONE and STALE only report such a record
-- (stale = 1; lock.c sends abandon.lua once no master has a holder), and OK
-- adds its 'abandoned' history entries but keeps the record it replaces as
-- it was and returns the entries' ids, also kept in our record's field
-- 'buried' (for a give-back whose reply was lost), so a give-back can undo
-- both.
-- Fair waiting: waiters queue in a ZSET by arrival ticket (INCR qseq), each
-- with a key q:WAITER that it refreshes; an entry whose key expired is a
-- dead waiter and is dropped when met at the head. A free lock goes to the
-- head of the queue only; with --limit N, F free slots go to the first F
-- live waiters. The state record's field 'queued' says whether the queue
-- may be non-empty, so a run that does not wait reads the queue only then,
-- and pays nothing for it otherwise (the field is read with the status).
local lock, fencek, statek = KEYS[KEY_LOCK], KEYS[KEY_FENCE], KEYS[KEY_STATE]
local histk, voidk, queuek = KEYS[KEY_HISTORY], KEYS[KEY_VOID], KEYS[KEY_QUEUE]
local qseqk, qkey, oncek = KEYS[KEY_QSEQ], KEYS[KEY_WAITER_KEY], KEYS[KEY_ONCE]
local token, ttl, host, pid = ARGV[ARG_TOKEN], ARGV[ARG_TTL_MS], ARGV[ARG_HOST], ARGV[ARG_PID]
local once, refuse = ARGV[ARG_ONCE_ID], ARGV[ARG_REFUSE_STALE] == '1'
local once_ttl = ARGV[ARG_ONCE_TTL_MS]
local wid, qttl = ARGV[ARG_WAITER] or '', ARGV[ARG_QUEUE_TTL_MS]
local ticket = tonumber(ARGV[ARG_TICKET]) or 0
local limit, qpre = tonumber(ARGV[ARG_LIMIT]) or 1, ARGV[ARG_WAITER_PREFIX]
local keep, wakepre = ARGV[ARG_KEEP] == '1', ARGV[ARG_WAKE_PREFIX]
-- The first NEAR waiters refresh their entries every third of qttl; those
-- behind them less often (busy() below; release.lua and queue.c: alike).
local NEAR = 4
-- SPUBLISH on a Cluster; a Redis 6.x Cluster has none: PUBLISH, heard on
-- every node (its waiters SUBSCRIBE there: cluster.c).
local function publish(ch, m)
  local r = ARGV[ARG_SHARDED] == '1' and redis.pcall('SPUBLISH', ch, m)
  if type(r) ~= 'number' then redis.call('PUBLISH', ch, m) end
end

-- How many listen on each channel of chs: PUBSUB NUMSUB (and SHARDNUMSUB
-- on a cluster, where waiters SSUBSCRIBE); nil when an ACL refuses PUBSUB
-- (the README's line has it): then nobody is heard, and every entry lives
-- and is refreshed as before (the short TTL).
--@ include listeners
--@ include flag_queued

-- The q: values of the waiters ids (false: dead). A value other than '1'
-- ('s', or 'f' and its short TTL: busy() below) says that the waiter was
-- heard listening on its channel; one that no longer listens is dead (a
-- process that dies closes its connections), whatever its key's TTL.
local function alive_of(ids)
  local keys = {}
  for i, id in ipairs(ids) do keys[i] = qpre .. id end
  local v, chk, at = redis.call('MGET', unpack(keys)), {}, {}
  for i, id in ipairs(ids) do
    if v[i] and v[i] ~= '1' then chk[#chk + 1] = wakepre .. id; at[#at + 1] = i end
  end
  local n = listeners(chk, ARGV[ARG_SHARDED] == '1') or {}
  for j, i in ipairs(at) do
    if n[j] == 0 then v[i] = false end
  end
  return v
end

-- The first k + 1 live waiters. Every dead entry met on the way is dropped
-- (a crowd killed at once must not cost the next live waiter one call per
-- ten of them), 64 at a time: one ZRANGE, one MGET of their q: keys, one
-- PUBSUB NUMSUB, one ZREM and one DEL. At most 4096 per call, so that the
-- script stays short; more = we stopped there and a live waiter may be
-- behind. Also returns how many were dropped.
local function heads(k)
  local live, dropped = {}, 0
  while #live <= k do
    if dropped >= 4096 then return live, true, dropped end
    local ids = redis.call('ZRANGE', queuek, #live, #live + 63)
    if #ids == 0 then break end
    local dead, dkeys = {}, {}
    local alive = alive_of(ids)
    for i, id in ipairs(ids) do
      if #live > k then break end
      if alive[i] then live[#live + 1] = id
      else dead[#dead + 1] = id; dkeys[#dkeys + 1] = qpre .. id end
    end
    if #dead > 0 then
      redis.call('ZREM', queuek, unpack(dead))
      redis.call('DEL', unpack(dkeys))
    end
    dropped = dropped + #dead
  end
  return live, false, dropped
end

-- A waiter takes or keeps its place in the queue and hears it is busy.
-- free: the lock is free but live waiters are ahead of us; the reply then
-- also says how many (ahead), for the message of a run that does not wait.
-- h: the holder's host, pid, fence and start ('' not known).
local function busy(pttl, h, free)
  if wid == '' then
    local ahead = -1
    if free then ahead = redis.call('ZCARD', queuek) end
    return {'BUSY', pttl, h[1], h[2], h[3], -1, 0, ahead, h[4]}
  end
  local sc = redis.call('ZSCORE', queuek, wid)
  if not sc then
    -- A waiter that was queued before (its entry was dropped: it looked
    -- dead, or the queue was lost) takes back its place: its ticket.
    sc = ticket
    if sc <= 0 then sc = redis.call('INCR', qseqk)
    elseif (tonumber(redis.call('GET', qseqk)) or 0) < sc then
      redis.call('SET', qseqk, sc)
    end
    redis.call('ZADD', queuek, sc, wid)
    -- Each arrival gives the queue and its counter the retention.
    redis.call('PEXPIRE', queuek, once_ttl)
    redis.call('PEXPIRE', qseqk, once_ttl)
  else
    -- With several masters a waiter's ticket is the largest any master
    -- gave it, so that every master orders the waiters alike.
    sc = tonumber(sc)
    if ticket > sc then
      sc = ticket
      redis.call('ZADD', queuek, 'XX', sc, wid)
      if (tonumber(redis.call('GET', qseqk)) or 0) < sc then
        redis.call('SET', qseqk, sc, 'PX', once_ttl)
      end
    end
  end
  local rank = redis.call('ZRANK', queuek, wid)
  -- Our entry lives qttl ('1': not yet heard listening; 's': listening).
  -- Behind the first NEAR, a waiter that listens on its channel lives
  -- longer the further back it is, and refreshes as rarely ('f' and the
  -- short TTL, which release.lua gives it back, with a message, as it comes
  -- near): its death is seen by its channel, not by its key. queue.c's
  -- rr_queue_rank_ttl is the same formula.
  local val, ttl = '1', tonumber(qttl)
  if (listeners({wakepre .. wid}, ARGV[ARG_SHARDED] == '1') or {0})[1] > 0 then
    val = 's'
    if rank >= NEAR then
      val = 'f' .. qttl
      ttl = ttl * math.min(rank * rank, 100 * NEAR * NEAR) / (NEAR * NEAR)
    end
  end
  redis.call('SET', qkey, val, 'PX', math.floor(ttl))
  if limit == 1 then flag_queued(statek, '1', once_ttl) end
  local ahead = -1
  if free then ahead = rank end
  return {'BUSY', pttl, h[1], h[2], h[3], rank, sc, ahead, h[4]}
end

local function slotkey(k, i)
  if i == 1 then return k end
  return k .. ':' .. i
end

-- A request that reaches us after its client gave up on it (delayed or
-- retransmitted in the network) must take nothing: the give-back, which
-- came first, left a tombstone for this token.
if redis.call('EXISTS', voidk) == 1 then return {'VOID'} end

-- The first free slot (--limit 1: the one lock key), and how many are free.
local slot, nfree, pttl, minslot = nil, 0, nil, 1
for i = 1, limit do
  local p = redis.call('PTTL', slotkey(lock, i))
  if p == -2 then
    nfree = nfree + 1
    if not slot then slot = i end
    if limit == 1 then break end
  elseif not pttl or (p >= 0 and (pttl < 0 or p < pttl)) then
    pttl, minslot = p, i
  end
end
-- A run whose --limit differs from the holders' (L, slot 1's record's):
-- refused if any slot of either is held.
local function other_limit(l)
  l = tonumber(l)
  if not l or l == limit then return nil end
  for i = 1, math.max(l, limit) do
    if redis.call('EXISTS', slotkey(KEYS[KEY_LOCK], i)) == 1 then
      return redis.error_reply('LIMIT this run\'s --limit ' .. limit .. ' differs from the --limit ' ..
        l .. ' its holders were admitted with: give a NAME one --limit on every host')
    end
  end
  return nil
end
local held_limit = false
if limit > 1 then
  held_limit = redis.call('HGET', statek, 'limit')
  local e = other_limit(held_limit)
  if e then return e end
end
if not slot then
  -- Report the holder only when the state record belongs to the lock's token.
  local holder = redis.call('GET', slotkey(lock, minslot))
  local h = redis.call('HMGET', slotkey(statek, minslot), 'token', 'host', 'pid', 'fence',
                       'limit', 'started_ms')
  if limit == 1 then
    local e = other_limit(h[5])
    if e then return e end
  end
  if h[1] ~= holder then return busy(pttl, {'', '', '', ''}) end
  return busy(pttl, {h[2] or '', h[3] or '', h[4] or '', h[6] or ''})
end
local basestate = statek
lock, statek = slotkey(lock, slot), slotkey(statek, slot)

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- One read of the record for the status, the queue flag and the last
-- success (replace() below carries it over): a plain run's command count
-- does not grow (t_fair checks it).
local sr = redis.call('HMGET', statek, 'status', 'queued', 'last_success_ms',
                      'last_success_fence', 'last_success_host', 'finished_ms', 'fence',
                      'host', 'limit', 'command')
if limit == 1 then
  local e = other_limit(sr[9])
  if e then return e end
end
local queued = ''
-- The live waiters read, when the queue was: a DONE or STALE below takes no
-- slot, and the next of them is told so (wake_next).
local qlive = nil
if wid ~= '' or limit > 1 or sr[2] == '1' then
  -- Free, but waiters may be queued: only they may take it, in order; the
  -- first nfree live ones, each a slot, and a slot they leave is anyone's.
  local live, more, dropped = heads(nfree)
  qlive = live
  local mine = false
  for i = 1, math.min(nfree, #live) do
    if live[i] == wid then mine = true end
  end
  if not mine and (#live >= nfree or more) then
    -- Dead waiters were ahead: the first live one may not know it is
    -- first, and may still be far (its entry long-lived: release.lua).
    if dropped > 0 and live[1] then
      local v = redis.call('GET', qpre .. live[1])
      if v and string.sub(v, 1, 1) == 'f' then
        redis.call('SET', qpre .. live[1], 's', 'PX', string.sub(v, 2), 'XX')
      end
      publish(wakepre .. live[1], '1')
    end
    return busy(-1, {'', '', '', ''}, true)
  end
  if wid ~= '' and not keep then
    redis.call('ZREM', queuek, wid)
    redis.call('DEL', qkey)
  elseif wid ~= '' then
    redis.call('PEXPIRE', qkey, qttl)
  end
  -- More free slots than we take: the next waiter in line may take one.
  if nfree > 1 then
    for _, id in ipairs(live) do
      if id ~= wid then
        publish(wakepre .. id, '1')
        break
      end
    end
  end
  if limit == 1 and redis.call('ZCARD', queuek) > 0 then queued = '1' end
end

-- We take no slot after all (DONE, STALE): the first live waiter other
-- than us may take it, and is told, as a release would tell it; else it
-- would learn only at its next refresh. (Our own entry stays: with
-- several masters a BUSY elsewhere outranks a STALE here, and we wait on.)
-- A dead run's records that this reported are marked by abandon.lua after
-- the round, even if the woken waiter has taken the lock by then.
local function wake_next()
  for _, id in ipairs(qlive or {}) do
    if id ~= wid then
      publish(wakepre .. id, '1')
      return
    end
  end
end

local function status_of(s)
  if s == 'running' then return 'abandoned', 1 end
  return s, 0
end
local st, stale = status_of(sr[1])
local rec = statek
local once_stale = 0
-- The attempts an --once ID has used (a record written before they were
-- counted is one), and whether an operator allowed one more since the last
-- (--resolve retry).
local used, retry, allowed = 0, false, tonumber(ARGV[ARG_ATTEMPTS]) or 1
if oncek then
  local o = redis.call('HMGET', oncek, 'status', 'attempts', 'retry')
  local s1
  s1, once_stale = status_of(o[1])
  st, rec, stale = s1, oncek, math.max(stale, once_stale)
  used = tonumber(o[2]) or (o[1] and 1 or 0)
  retry = o[3] == '1'
end
--mutant once_no_record_check: if false then
if st == 'succeeded' and oncek then
  local r = redis.call('HMGET', oncek, 'host', 'pid', 'fence', 'finished_ms')
  wake_next()
  return {'DONE', r[1] or '', r[2] or '', r[3] or '', r[4] or '', stale}
end
local ended = st == 'failed' or st == 'timeout' or st == 'lost' or st == 'abandoned'
local spent = oncek and ended and not retry and used >= allowed
if spent or (st == 'abandoned' and refuse and not retry) then
  local r = redis.call('HMGET', rec, 'host', 'pid', 'fence', 'heartbeat_ms', 'finished_ms',
                       'exit_code', 'signal')
  local when = r[4]
  if st ~= 'abandoned' and r[5] and r[5] ~= '' then when = r[5] end
  wake_next()
  return {'STALE', r[1] or '', r[2] or '', r[3] or '', when or '', rec, stale, st,
          spent and 1 or 0, used, allowed, r[6] or '', r[7] or '', now}
end

-- We take the lock. A dead run's record gets its history entry (once per
-- run), then is replaced by ours below.
local abandoned = 0
local ids = {}
local seen = {}
-- log: add the history entry; a dead run's is written with its state
-- record (here, or by abandon.lua), never again for its --once record.
local function bury(key, log)
  local r = redis.call('HMGET', key, 'status', 'token', 'host', 'pid', 'fence',
                       'once', 'started_ms', 'heartbeat_ms')
  if r[1] ~= 'running' or seen[r[2] or ''] then return end
  seen[r[2] or ''] = true
  abandoned = 1
  if not log then return end
  local st0 = tonumber(r[7]) or now
  local hb = tonumber(r[8]) or st0
  ids[#ids + 1] = redis.call('XADD', histk, 'MAXLEN', '~', 1000, '*', 'status', 'abandoned',
             'exit_code', '', 'signal', '', 'host', r[3] or '', 'pid', r[4] or '',
             'fence', r[5] or '', 'once', r[6] or '', 'started_ms', st0,
             'finished_ms', hb, 'duration_ms', hb - st0, 'wait_ms', '')
  redis.call('PEXPIRE', histk, once_ttl)
end
-- Only a record still 'running' is buried (its status was read above).
if sr[1] == 'running' then bury(statek, true) end
if oncek and once_stale == 1 then bury(oncek, false) end

redis.call('SET', lock, token, 'PX', ttl)
-- The fencing token never goes below the acquiring host's clock in ms, so it
-- keeps increasing even if the counter is lost (a restart without
-- persistence). The floor comes from the client, not from TIME, so that all
-- masters of a quorum usually agree on the same value. A counter that is
-- gone (it expired with the job's other keys after --state-ttl without a
-- run, or a restart lost it) starts again from this server's clock too, so
-- a host whose clock is behind cannot draw a fence below an old one
-- (docs/ARCHITECTURE.md, "Keys that end").
local cur = tonumber(redis.call('GET', fencek))
local floor = tonumber(ARGV[ARG_FENCE_FLOOR]) or 0
--mutant fence_no_time_floor: if false then floor = math.max(floor, now) end
if not cur then floor = math.max(floor, now) end
--mutant no_fence_incr: local fence = math.max(cur or 0, floor)
local fence = math.max((cur or 0) + 1, floor)
redis.call('SET', fencek, string.format('%.0f', fence), 'PX', once_ttl)
local fields = {'status', 'running', 'host', host, 'pid', pid, 'fence', fence,
                'token', token, 'started_ms', now, 'heartbeat_ms', now,
                'finished_ms', '', 'exit_code', '', 'signal', '', 'once', once,
                'queued', queued, 'contain', ARGV[ARG_CONTAIN] or '', 'limit', limit,
                'command', ARGV[ARG_COMMAND] or '', 'command_prev', sr[10] or ''}
if #ids > 0 then
  fields[#fields + 1] = 'buried'
  fields[#fields + 1] = table.concat(ids, ' ')
end
-- The record we replace is kept, serialised and unchanged, in field 'prev'
-- until our run ends, so that giving back a partial acquisition can put it
-- back.
-- The last success (release.lua writes it) outlives the runs after it:
-- ls is {last_success_ms, _fence, _host, status, finished_ms, fence, host}
-- of the record we replace.
local function replace(key, ls, extra)
  redis.call('HDEL', key, 'prev')   -- one level back is all we need
  -- A success recorded before records kept last_success_*.
  if not ls[1] and ls[4] == 'succeeded' and ls[5] then ls = {ls[5], ls[6], ls[7]} end
  local f = {unpack(fields)}
  for _, v in ipairs(extra or {}) do f[#f + 1] = v end
  if ls[1] then
    f[#f + 1] = 'last_success_ms'; f[#f + 1] = ls[1]
    f[#f + 1] = 'last_success_fence'; f[#f + 1] = ls[2] or ''
    f[#f + 1] = 'last_success_host'; f[#f + 1] = ls[3] or ''
  end
  local old = redis.call('DUMP', key)
  if old then
    f[#f + 1] = 'prev'; f[#f + 1] = old
  end
  redis.call('DEL', key)
  redis.call('HSET', key, unpack(f))
end
replace(statek, {sr[3], sr[4], sr[5], sr[1], sr[6], sr[7], sr[8]})
redis.call('PEXPIRE', statek, once_ttl)
if slot ~= 1 and tonumber(held_limit) ~= limit then
  redis.call('HSET', basestate, 'limit', limit)
  -- A record this creates (slot 1's was deleted under its holder) ends too.
  if redis.call('PTTL', basestate) == -1 then redis.call('PEXPIRE', basestate, once_ttl) end
end
if oncek then
  replace(oncek, redis.call('HMGET', oncek, 'last_success_ms', 'last_success_fence',
                            'last_success_host', 'status', 'finished_ms', 'fence', 'host'),
          {'attempts', used + 1})
  redis.call('PEXPIRE', oncek, once_ttl)
end
-- The command's fingerprint (a hash, never the arguments) differs from the
-- last run's: bit 1 of the abandoned flag.
local cmd = ARGV[ARG_COMMAND] or ''
local changed = cmd ~= '' and sr[10] and sr[10] ~= '' and sr[10] ~= cmd
return {'OK', fence, now, abandoned + (changed and 2 or 0), slot, unpack(ids)}
