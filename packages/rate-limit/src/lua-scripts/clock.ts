/**
 * The opening every script with a clock shares: effects replication (a no-op on Redis >= 5, needed before it for a
 * script that reads TIME and then writes), then `local now` in ms, the injected time in ARGV[`argv`] (tests only) or,
 * when that is "", Redis TIME, so that every replica decides by one clock.
 */
export const luaNow = (argv: number): string => `
if redis.replicate_commands then redis.replicate_commands() end -- effects replication (no-op on Redis >= 5)
local now
if ARGV[${argv}] ~= '' then
  now = tonumber(ARGV[${argv}])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end`;
