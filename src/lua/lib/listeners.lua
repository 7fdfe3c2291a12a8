-- listeners(chs, sharded): how many listen on each channel of chs, PUBSUB
-- NUMSUB (and SHARDNUMSUB when sharded: on a cluster, where waiters
-- SSUBSCRIBE); nil when an ACL refuses PUBSUB (the README's line has it).
-- Included by acquire.lua and release.lua ("--@ include listeners"), joined
-- into one line: no comment may follow code here.
local function listeners(chs, sharded)
  local n = {}
  if #chs == 0 then return n end
  local r = redis.pcall('PUBSUB', 'NUMSUB', unpack(chs))
  if r.err then return nil end
  for i = 1, #chs do n[i] = tonumber(r[2 * i]) end
  if sharded then
    local sh = redis.pcall('PUBSUB', 'SHARDNUMSUB', unpack(chs))
    if not sh.err then
      for i = 1, #chs do n[i] = n[i] + (tonumber(sh[2 * i]) or 0) end
    end
  end
  return n
end
