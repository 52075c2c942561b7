/**
 * Takes one charge back (see RateLimitStore.refund), in one script.
 *
 * KEYS[1..n]  the window hashes of the identity: { s = window start (ms), c = count }
 * ARGV[1]     the charge's time (ms)
 * ARGV[2..]   windowMs_i for each window
 *
 * A window is decremented only while it is still the one the charge fell in and its count is above zero.
 */
export const REFUND_LUA = `
local at = tonumber(ARGV[1])
for i = 1, #KEYS do
  local w = tonumber(ARGV[1 + i])
  local h = redis.call('HMGET', KEYS[i], 's', 'c')
  if h[1] and tonumber(h[1]) == at - (at % w) and (tonumber(h[2]) or 0) > 0 then
    redis.call('HINCRBY', KEYS[i], 'c', -1)
  end
end
return 0
`;
