-- first_live(queuek, qpre, wakepre, sharded): the first live waiter in the
-- queue, or nil; the dead entries before it are dropped, 64 at a time
-- (ZRANGE, MGET of their q: keys, ZREM), at most 4096 per call. A waiter
-- heard listening (a q: value other than '1': acquire.lua) that no longer
-- listens on its channel is dead too; where an ACL refuses PUBSUB nobody
-- is heard, as in acquire.lua. Needs listeners (include it first).
-- Included by leave.lua and force.lua ("--@ include first_live"), joined
-- into one line: no comment may follow code here.
local function first_live(queuek, qpre, wakepre, sharded)
  for _ = 1, 64 do
    local ids = redis.call('ZRANGE', queuek, 0, 63)
    if #ids == 0 then return nil end
    local keys, dead, chk, at = {}, {}, {}, {}
    for i, id in ipairs(ids) do keys[i] = qpre .. id end
    local alive = redis.call('MGET', unpack(keys))
    for i, id in ipairs(ids) do
      if alive[i] and alive[i] ~= '1' then chk[#chk + 1] = wakepre .. id; at[#at + 1] = i end
    end
    local n = listeners(chk, sharded) or {}
    for j, i in ipairs(at) do
      if n[j] == 0 then alive[i] = false end
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
