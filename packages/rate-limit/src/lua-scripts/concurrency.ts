import { luaNow } from './clock.js';

/**
 * One slot of an identity's concurrency limit, in one script (one round trip).
 *
 * KEYS[1]  sorted set of the identity's leases: member = lease name, score = its expiry (ms)
 * ARGV[1]  limit (leases allowed at once)
 * ARGV[2]  lease life (ms)
 * ARGV[3]  lease name
 * ARGV[4]  injected time in ms (tests only) or "" to use Redis TIME
 *
 * Returns { acquired (1 or 0), leases in flight after this step }. Expired leases (a process that died holding them)
 * are removed first; the key expires with its last lease.
 */
export const CONCURRENCY_LUA = `${luaNow(4)}
local limit = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then return { 0, n } end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + ttl), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl)
return { 1, n + 1 }
`;
