import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDatabaseUrl, sessionUrl } from './database-url.js';
import { loadConfig } from './load.js';
import { SERVER_ROOT } from './server-root.js';

describe('loadConfig', () => {
  it('has defaults for the embedded setup', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.database).toEqual({
      provider: 'sqlite',
      url: `file:${join(SERVER_ROOT, 'data/animal-store.db')}`,
      file: join(SERVER_ROOT, 'data/animal-store.db'),
    });
    expect(config.logLevel).toBe('info');
    expect(config.redisUrl).toBeUndefined();
    expect(config.rateLimit).toEqual({ banThreshold: 10, banSeconds: 900, redisFailure: 'fallback' });
    expect(config.pageCacheEntries).toBe(128);
    expect(loadConfig({ PAGE_CACHE_ENTRIES: '0' }).pageCacheEntries).toBe(0);
    expect(config.petCacheEntries).toBe(20_000);
    expect(loadConfig({ PET_CACHE_ENTRIES: '0' }).petCacheEntries).toBe(0);
    expect(config.coalesceReads).toBe(true);
    expect(loadConfig({ READ_COALESCING: 'false' }).coalesceReads).toBe(false);
    expect(config.readConcurrency).toBe(4);
  });

  it('has bounded waits, HTTP limits for a service behind a load balancer, and a drain period by default', () => {
    const config = loadConfig({});
    expect(config.databaseLimits).toEqual({
      poolSize: 10,
      poolTimeoutMs: 2000,
      statementTimeoutMs: 5000,
      lockTimeoutMs: 1000,
      sqliteBusyTimeoutMs: 1000,
    });
    expect(config.http).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 10_000,
    });
    expect(config.shutdownDrainMs).toBe(5000);
    expect(config.trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8,loopback' }).trustProxy).toEqual(['10.0.0.0/8', 'loopback']);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'file:' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ RATE_LIMIT_REDIS_FAILURE: 'maybe' }, 'RATE_LIMIT_REDIS_FAILURE'],
    [{ TRUST_PROXY: 'perhaps' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/40' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1, not-an-address' }, 'TRUST_PROXY'],
    [{ DATABASE_POOL_TIMEOUT_MS: '0' }, 'DATABASE_POOL_TIMEOUT_MS'],
    [{ HTTP_HEADERS_TIMEOUT_MS: '10' }, 'HTTP_HEADERS_TIMEOUT_MS'],
    [{ MAX_CONNECTIONS: '0' }, 'MAX_CONNECTIONS'],
    [{ SHUTDOWN_DRAIN_MS: 'soon' }, 'SHUTDOWN_DRAIN_MS'],
    [{ PAGE_CACHE_ENTRIES: '-1' }, 'PAGE_CACHE_ENTRIES'],
    [{ READ_CONCURRENCY: '0' }, 'READ_CONCURRENCY'],
    [{ PAGE_CACHE_ENTRIES: '10001' }, 'PAGE_CACHE_ENTRIES'],
    [{ PET_CACHE_ENTRIES: '1000001' }, 'PET_CACHE_ENTRIES'],
    [{ DATABASE_URL: 'postgresql://u@pooler/db', DATABASE_DIRECT_URL: 'mysql://x' }, 'DATABASE_DIRECT_URL'],
    [{ DATABASE_DIRECT_URL: 'postgresql://u@db/db' }, 'DATABASE_DIRECT_URL'],
    [{ REDIS_CLUSTER_NODES: 'redis-a:7001,redis-b' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_URL: 'redis://a:6379' }, 'REDIS_CLUSTER_NODES'],
  ])('refuses %j naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(name);
  });

  it('takes a pooled DATABASE_URL with DATABASE_DIRECT_URL for the work that needs a session', () => {
    const pooled = loadConfig({
      DATABASE_URL: 'postgresql://u@pooler:6432/db?pgbouncer=true',
      DATABASE_DIRECT_URL: 'postgres://u@db:5432/db',
    }).database;
    expect(pooled).toEqual({
      provider: 'postgresql',
      url: 'postgresql://u@pooler:6432/db?pgbouncer=true',
      directUrl: 'postgres://u@db:5432/db',
    });
    expect(sessionUrl(pooled as Extract<typeof pooled, { provider: 'postgresql' }>)).toBe('postgres://u@db:5432/db');
    const direct = loadConfig({ DATABASE_URL: 'postgresql://u@db/db' }).database;
    expect(direct).toEqual({ provider: 'postgresql', url: 'postgresql://u@db/db' });
    expect(sessionUrl(direct as Extract<typeof direct, { provider: 'postgresql' }>)).toBe('postgresql://u@db/db');
  });

  it('sheds load by default, on thresholds of its own, and limits requests in flight per key in each process', () => {
    const config = loadConfig({});
    expect(config.loadShedding).toEqual({
      enabled: true,
      thresholds: {
        targetDelayMs: 5,
        eventLoopDelayMs: 50,
        eventLoopUtilization: 0.97,
        maxInFlight: 1000,
        maxDbWaiting: 50,
        minInFlight: 8,
      },
      turn: { budgetMs: 2, utilization: 0.8 },
      hold: { ms: 1000, maxSockets: 1000 },
    });
    expect(config.livenessStallMs).toBe(5000);
    expect(config.concurrency).toEqual({ scope: 'replica', leaseMs: 60_000 });
    expect(config.opsPort).toBeUndefined();
    const changed = loadConfig({
      LOAD_SHEDDING: 'false',
      LOAD_SHED_EVENT_LOOP_UTILIZATION: '75',
      LOAD_SHED_TARGET_DELAY_MS: '20',
      LOAD_SHED_MAX_IN_FLIGHT: '0',
      LOAD_SHED_TURN_BUDGET_MS: '0',
      CONCURRENCY_LIMITS: 'shared',
      OPS_PORT: '9464',
      REFUSAL_HOLD_MS: '0',
      LIVENESS_STALL_MS: '2000',
    });
    expect(changed.loadShedding.enabled).toBe(false);
    expect(changed.loadShedding.hold).toEqual({ ms: 0, maxSockets: 1000 });
    expect(changed.livenessStallMs).toBe(2000);
    expect(changed.loadShedding.thresholds.eventLoopUtilization).toBe(0.75);
    expect(changed.loadShedding.thresholds.targetDelayMs).toBe(20);
    expect(changed.loadShedding.thresholds.maxInFlight).toBe(0);
    expect(changed.loadShedding.turn.budgetMs).toBe(0);
    expect(changed.concurrency.scope).toBe('shared');
    expect(changed.opsPort).toBe(9464);
    expect(() => loadConfig({ LOAD_SHED_EVENT_LOOP_UTILIZATION: '120' })).toThrow(/at most 100/);
    expect(() => loadConfig({ LOAD_SHED_TARGET_DELAY_MS: '0' })).toThrow(/at least 1/);
    expect(() => loadConfig({ CONCURRENCY_LIMITS: 'global' })).toThrow(/replica, shared, off/);
  });

  it('selects a Redis Cluster from REDIS_CLUSTER_NODES', () => {
    expect(loadConfig({}).redisClusterNodes).toBeUndefined();
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'redis-a:7001, redis-b:7002' }).redisClusterNodes).toEqual([
      { host: 'redis-a', port: 7001 },
      { host: 'redis-b', port: 7002 },
    ]);
  });

  it('resolves relative SQLite paths against the server package, whoever runs it', () => {
    expect(parseDatabaseUrl('file:./x/y.db')).toMatchObject({ file: join(SERVER_ROOT, 'x/y.db') });
    expect(parseDatabaseUrl('file:/tmp/a.db')).toMatchObject({ file: '/tmp/a.db' });
    expect(parseDatabaseUrl('postgres://u@h/db')).toEqual({ provider: 'postgresql', url: 'postgres://u@h/db' });
    expect(parseDatabaseUrl('postgresql://u@h/db').provider).toBe('postgresql');
  });
});
