import { luaNow } from './clock.js';

/**
 * The whole decision in one script (one round trip).
 *
 * KEYS[1..n]  one hash per window: { s = window start (ms), c = count }
 * KEYS[n+1]   ban: string holding the ban end (ms)
 * KEYS[n+2]   refusal counter: hash { s = refusal-window start, c = refusals }
 * ARGV[1]     n (number of windows)
 * ARGV[2]     injected time in ms (tests only) or "" to use Redis TIME
 * ARGV[3]     max refusals before a ban, or "-1" to disable bans
 * ARGV[4]     refusal-counting window (ms)
 * ARGV[5]     ban duration (ms)
 * ARGV[6..]   limit_i, windowMs_i for each window
 *
 * Returns { outcome (0 allowed, 1 refused, 2 banned), now, banUntil, banStarted, count_1..count_n }.
 * Every decision compares stored window starts / ban end with `now`, so expiry is
 * only garbage collection (PEXPIRE to the end of the window, computed from the same `now`).
 */
export const RATE_LIMIT_LUA = `${luaNow(2)}
local n = tonumber(ARGV[1])
local maxRefusals = tonumber(ARGV[3])
local banWindow = tonumber(ARGV[4])
local banDuration = tonumber(ARGV[5])

local counts = {}
local starts = {}
local fresh = {}
local fits = true
for i = 1, n do
  local limit = tonumber(ARGV[4 + 2 * i])
  local w = tonumber(ARGV[5 + 2 * i])
  local start = now - (now % w)
  local h = redis.call('HMGET', KEYS[i], 's', 'c')
  local c = 0
  if h[1] and tonumber(h[1]) == start then
    c = tonumber(h[2]) or 0
  else
    fresh[i] = true
  end
  counts[i] = c
  starts[i] = start
  if c + 1 > limit then fits = false end
end

local function reply(outcome, banUntil, started)
  local r = { outcome, string.format('%.0f', now), string.format('%.0f', banUntil), started }
  for i = 1, n do r[4 + i] = counts[i] end
  return r
end

local banUntil = tonumber(redis.call('GET', KEYS[n + 1]) or '0') or 0
if banUntil > now then return reply(2, banUntil, 0) end

if fits then
  for i = 1, n do
    local w = tonumber(ARGV[5 + 2 * i])
    local ttl = string.format('%.0f', starts[i] + w - now)
    if fresh[i] then
      redis.call('HSET', KEYS[i], 's', string.format('%.0f', starts[i]), 'c', 1)
      redis.call('PEXPIRE', KEYS[i], ttl)
      counts[i] = 1
    else
      counts[i] = redis.call('HINCRBY', KEYS[i], 'c', 1)
    end
  end
  return reply(0, 0, 0)
end

if maxRefusals < 0 then return reply(1, 0, 0) end

local rKey = KEYS[n + 2]
local rStart = now - (now % banWindow)
local rh = redis.call('HMGET', rKey, 's', 'c')
local refusals = 1
if rh[1] and tonumber(rh[1]) == rStart then refusals = (tonumber(rh[2]) or 0) + 1 end
if refusals > maxRefusals then
  banUntil = now + banDuration
  redis.call('SET', KEYS[n + 1], string.format('%.0f', banUntil), 'PX', banDuration)
  redis.call('DEL', rKey)
  return reply(2, banUntil, 1)
end
redis.call('HSET', rKey, 's', string.format('%.0f', rStart), 'c', refusals)
redis.call('PEXPIRE', rKey, string.format('%.0f', rStart + banWindow - now))
return reply(1, 0, 0)
`;
