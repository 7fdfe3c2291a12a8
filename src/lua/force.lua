-- force: the operator's --release. A live holder's lock is not deleted
-- (a new holder could then start while the old command still runs, until
-- its next renewal): its value becomes a revocation marker, 'revoked:' ..
-- token, keeping the key's TTL. The holder's next renewal finds another
-- value and kills its command at once (a certain loss, exit 79); its
-- release (release.lua) deletes the marker of its own token and wakes the
-- waiters. Nobody can acquire meanwhile: the key exists until then or
-- until the old lease ends. mode 'poll' only reports (the wait of
-- --release); 'force' (--force) deletes whatever the holder does.
--! KEYS lock state history queue
--! ARGV channel host pid sharded mode fence slot max_slot state_ttl_ms
--! ARGV waiter_prefix wake_prefix
-- host, pid: the operator's; sharded: 1, SPUBLISH (on a cluster);
-- mode: revoke, force or poll; fence: act only on a holder of this fence
-- ('' any); slot: the --limit slot K to act on (lock, state: slot 1's
-- keys; slot K's are lock:K, state:K), or 0: every held slot of 1..max_slot
-- (with a fence: the ones whose holder has it). state_ttl_ms: --state-ttl,
-- the expiry of a history this script has to create (one that exists keeps
-- the one its runs gave it). queue, waiter_prefix, wake_prefix: the
-- waiters' queue (acquire.lua); a deleted lock wakes its first live one.
-- Returns {{slot, tag, pttl, host, pid, fence, status, heartbeat_ms,
-- finished_ms}...}: one entry for slot K, or one per held slot (slot 0).
-- tag: FREE (no lock: slot K only), FENCE (another fence holds it: nothing
-- done), REVOKED (marked now), PENDING (marked before: still waiting for
-- the holder), DELETED (deleted: --force, or nothing runs under it: its
-- run ended, a --min-hold tail), FOREVER (a holder with no record of its
-- token and no expiry: nothing done), HELD (poll).
-- A holder with no record of its token is not a redlock-run run: an
-- application that SET the key itself. It is revoked like a live run (its
-- compare-and-extend and compare-and-delete no longer match, so its lease
-- runs out), never deleted without --force.
-- The holder's fields come from the state record of its token.
local histk = KEYS[KEY_HISTORY]
local sharded = ARGV[ARG_SHARDED] == '1'
local function publish(ch, m)
  local r = sharded and redis.pcall('SPUBLISH', ch, m)
  if type(r) ~= 'number' then redis.call('PUBLISH', ch, m) end
end
--@ include listeners
--@ include first_live
local mode, want = ARGV[ARG_MODE], ARGV[ARG_FENCE] or ''
local function slotkey(k, i)
  if i == 1 then return k end
  return k .. ':' .. i
end

local function act(i)
  local lock, statek = slotkey(KEYS[KEY_LOCK], i), slotkey(KEYS[KEY_STATE], i)
  local v = redis.call('GET', lock)
  local h = redis.call('HMGET', statek, 'token', 'host', 'pid', 'fence', 'once', 'status',
                       'heartbeat_ms', 'finished_ms')
  local function reply(tag, pttl, known)
    -- Another holder's record says nothing of this one.
    if not known then return {i, tag, pttl, '', '', '', '', '', ''} end
    return {i, tag, pttl, h[2] or '', h[3] or '', h[4] or '', h[6] or '', h[7] or '',
            h[8] or ''}
  end
  if not v then return reply('FREE', -2, true) end
  local pttl = redis.call('PTTL', lock)
  local revoked = string.sub(v, 1, 8) == 'revoked:'
  local token = revoked and string.sub(v, 9) or v
  local known = h[1] == token
  if mode == 'poll' then return reply(revoked and 'PENDING' or 'HELD', pttl, known) end
  if want ~= '' and (not known or h[4] ~= want) then return reply('FENCE', pttl, known) end
  -- A value with no record of its token is another program's lock (an
  -- application's SET NX PX on this key): as live as a running holder.
  local live = not known or h[6] == 'running'
  local tag
  if mode == 'force' or not live then
    redis.call('DEL', lock)
    tag = 'DELETED'
  elseif revoked then
    return reply('PENDING', pttl, known)
  elseif pttl < 0 then
    -- No lease to wait for: a mark would keep it forever.
    return reply('FOREVER', pttl, known)
  else
    redis.call('SET', lock, 'revoked:' .. token, 'KEEPTTL')
    tag = 'REVOKED'
  end
  local by = ARGV[ARG_HOST] .. ':' .. ARGV[ARG_PID]
  -- A live run of ours learns from its record who took its lock (renew.lua).
  if known and live then redis.call('HSET', statek, 'revoked_by', by) end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if not known then h = {false, false, false, false, false, h[6], h[7], h[8]} end
  redis.call('XADD', histk, 'MAXLEN', '~', 1000, '*', 'status', 'released',
             'exit_code', '', 'signal', '', 'host', h[2] or '', 'pid', h[3] or '',
             'fence', h[4] or '', 'once', h[5] or '', 'started_ms', now,
             'finished_ms', now, 'duration_ms', 0, 'wait_ms', '',
             'by', by)
  if redis.call('PTTL', histk) == -1 then redis.call('PEXPIRE', histk, ARGV[ARG_STATE_TTL_MS]) end
  -- A deleted lock is free: tell with the holder's fence (if known), never
  -- its token (PUBLISH where a Cluster has no SPUBLISH), and wake the first
  -- live waiter, as a release does (the holder, if it lives, no longer
  -- owns the key, so its release wakes nobody).
  if tag == 'DELETED' then
    publish(ARGV[ARG_CHANNEL], h[4] or '')
    local head = first_live(KEYS[KEY_QUEUE], ARGV[ARG_WAITER_PREFIX], ARGV[ARG_WAKE_PREFIX], sharded)
    if head then publish(ARGV[ARG_WAKE_PREFIX] .. head, '1') end
  end
  return reply(tag, pttl, known)
end

local slot = tonumber(ARGV[ARG_SLOT]) or 1
if slot > 0 then return {act(slot)} end
local out = {}
for i = 1, tonumber(ARGV[ARG_MAX_SLOT]) or 1 do
  if redis.call('EXISTS', slotkey(KEYS[KEY_LOCK], i)) == 1 then out[#out + 1] = act(i) end
end
return out
