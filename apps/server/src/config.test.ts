import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseDatabaseUrl, SERVER_ROOT } from './config.js';

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
    expect(config.coalesceReads).toBe(true);
    expect(loadConfig({ READ_COALESCING: 'false' }).coalesceReads).toBe(false);
    expect(config.readConcurrency).toBe(4);
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
    [{ PAGE_CACHE_ENTRIES: '-1' }, 'PAGE_CACHE_ENTRIES'],
    [{ READ_CONCURRENCY: '0' }, 'READ_CONCURRENCY'],
    [{ PAGE_CACHE_ENTRIES: '10001' }, 'PAGE_CACHE_ENTRIES'],
  ])('refuses %j naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(name);
  });

  it('resolves relative SQLite paths against the server package, whoever runs it', () => {
    expect(parseDatabaseUrl('file:./x/y.db')).toMatchObject({ file: join(SERVER_ROOT, 'x/y.db') });
    expect(parseDatabaseUrl('file:/tmp/a.db')).toMatchObject({ file: '/tmp/a.db' });
    expect(parseDatabaseUrl('postgres://u@h/db')).toEqual({ provider: 'postgresql', url: 'postgres://u@h/db' });
    expect(parseDatabaseUrl('postgresql://u@h/db').provider).toBe('postgresql');
  });
});
