import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseClusterNodes, type ClusterNodeAddress } from '@animal-store/rate-limit';
import { z } from 'zod';
import { parseTrustProxy, type TrustProxy } from './trust-proxy.js';

/** apps/server: relative `file:` database paths are resolved against this directory, whoever runs the process. */
export const SERVER_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DEFAULT_DATABASE_URL = 'file:./data/animal-store.db';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const int = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, `${name} must be a whole number`)
    .transform(Number)
    .pipe(z.number().int().min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`));

const bool = (name: string) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { errorMap: () => ({ message: `${name} must be true or false` }) })
    .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** A string turned into a value by `parse`, whose thrown message becomes the variable's configuration error. */
const parsedBy = <T>(parse: (value: string) => T, fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx): T => {
      try {
        return parse(value);
      } catch (err) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
        return z.NEVER;
      }
    });

export type DatabaseTarget =
  | { provider: 'sqlite'; url: string; file: string }
  | {
      provider: 'postgresql';
      /** What the pool uses: the database, or a pooler (PgBouncer in transaction mode) in front of it. */
      url: string;
      /**
       * `DATABASE_DIRECT_URL`: the same database without the pooler, for work that needs a session of its own
       * (migrations at start, `LISTEN`); see {@link sessionUrl}.
       */
      directUrl?: string;
    };

/** The URL for work that needs a PostgreSQL session of its own: `DATABASE_DIRECT_URL` when set, else `DATABASE_URL`. */
export function sessionUrl(target: Extract<DatabaseTarget, { provider: 'postgresql' }>): string {
  return target.directUrl ?? target.url;
}

const isPostgresUrl = (url: string) => {
  if (!/^postgres(ql)?:\/\//.test(url)) return false;
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
};

/** `file:...` selects SQLite (relative paths against apps/server); `postgres(ql)://...` selects PostgreSQL. */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith('file:')) {
    const path = url.slice('file:'.length).replace(/^\/\/(?=\/)/, '');
    if (path.length === 0) throw new Error('DATABASE_URL must name a file after file:');
    const file = path === ':memory:' ? path : isAbsolute(path) ? path : resolve(SERVER_ROOT, path);
    return { provider: 'sqlite', url: `file:${file}`, file };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    if (!isPostgresUrl(url)) throw new Error('DATABASE_URL is not a valid postgres URL');
    return { provider: 'postgresql', url };
  }
  throw new Error('DATABASE_URL must start with file: (SQLite) or postgres:// / postgresql:// (PostgreSQL)');
}

const EnvSchema = z
  .object({
    PORT: int('PORT', 0, 65535).default('3000'),
    HOST: z.string().min(1, 'HOST must not be empty').default('0.0.0.0'),
    DATABASE_URL: parsedBy(parseDatabaseUrl, DEFAULT_DATABASE_URL),
    DATABASE_DIRECT_URL: z
      .string()
      .refine(isPostgresUrl, 'DATABASE_DIRECT_URL must be a postgres:// or postgresql:// URL')
      .optional(),
    LOG_LEVEL: z
      .enum(LOG_LEVELS, { errorMap: () => ({ message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` }) })
      .default('info'),
    KEY_CACHE_TTL_MS: int('KEY_CACHE_TTL_MS', 0, 600_000).default('5000'),
    PAGE_CACHE_ENTRIES: int('PAGE_CACHE_ENTRIES', 0, 10_000).default('128'),
    PET_CACHE_ENTRIES: int('PET_CACHE_ENTRIES', 0, 1_000_000).default('20000'),
    READ_COALESCING: bool('READ_COALESCING').default('true'),
    READ_CONCURRENCY: int('READ_CONCURRENCY', 1, 1000).default('4'),
    IDEMPOTENCY_TTL_HOURS: int('IDEMPOTENCY_TTL_HOURS', 24, 8760).default('24'),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'REDIS_URL must start with redis:// or rediss://')
      .optional(),
    REDIS_CLUSTER_NODES: z
      .string()
      .transform((text, ctx) => {
        try {
          return parseClusterNodes(text);
        } catch (err) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            message: `REDIS_CLUSTER_NODES must be host:port,host:port,...: ${(err as Error).message}`,
          });
          return z.NEVER;
        }
      })
      .optional(),
    RATE_LIMIT_BAN_THRESHOLD: int('RATE_LIMIT_BAN_THRESHOLD', 1, 1_000_000).default('10'),
    RATE_LIMIT_BAN_SECONDS: int('RATE_LIMIT_BAN_SECONDS', 1, 31 * 86_400).default('900'),
    RATE_LIMIT_REDIS_FAILURE: z
      .enum(['fallback', 'refuse'], {
        errorMap: () => ({ message: 'RATE_LIMIT_REDIS_FAILURE must be fallback or refuse' }),
      })
      .default('fallback'),
    TRUST_PROXY: parsedBy(parseTrustProxy, 'false'),
    METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
    ADMIN_TOKEN: z.string().min(32, 'ADMIN_TOKEN must be at least 32 characters').optional(),
    SHUTDOWN_TIMEOUT_MS: int('SHUTDOWN_TIMEOUT_MS', 0, 120_000).default('10000'),
    DATABASE_STARTUP_TIMEOUT_MS: int('DATABASE_STARTUP_TIMEOUT_MS', 0, 600_000).default('30000'),
    SHUTDOWN_DRAIN_MS: int('SHUTDOWN_DRAIN_MS', 0, 120_000).default('5000'),
    DATABASE_POOL_SIZE: int('DATABASE_POOL_SIZE', 2, 1000).default('10'),
    DATABASE_POOL_TIMEOUT_MS: int('DATABASE_POOL_TIMEOUT_MS', 100, 60_000).default('2000'),
    DATABASE_STATEMENT_TIMEOUT_MS: int('DATABASE_STATEMENT_TIMEOUT_MS', 0, 600_000).default('5000'),
    DATABASE_LOCK_TIMEOUT_MS: int('DATABASE_LOCK_TIMEOUT_MS', 0, 600_000).default('1000'),
    SQLITE_BUSY_TIMEOUT_MS: int('SQLITE_BUSY_TIMEOUT_MS', 0, 60_000).default('1000'),
    HTTP_HEADERS_TIMEOUT_MS: int('HTTP_HEADERS_TIMEOUT_MS', 1000, 600_000).default('10000'),
    HTTP_REQUEST_TIMEOUT_MS: int('HTTP_REQUEST_TIMEOUT_MS', 1000, 3_600_000).default('30000'),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: int('HTTP_KEEP_ALIVE_TIMEOUT_MS', 0, 600_000).default('65000'),
    MAX_CONNECTIONS: int('MAX_CONNECTIONS', 1, 10_000_000).default('10000'),
  })
  .superRefine((e, ctx) => {
    if (e.DATABASE_DIRECT_URL !== undefined && e.DATABASE_URL.provider !== 'postgresql') {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['DATABASE_DIRECT_URL'],
        message: 'DATABASE_DIRECT_URL is for PostgreSQL only (DATABASE_URL names SQLite)',
      });
    }
    if (e.REDIS_URL !== undefined && e.REDIS_CLUSTER_NODES !== undefined) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['REDIS_CLUSTER_NODES'],
        message: 'set REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both',
      });
    }
  });

export type Config = {
  port: number;
  host: string;
  database: DatabaseTarget;
  logLevel: (typeof LOG_LEVELS)[number];
  keyCacheTtlMs: number;
  pageCacheEntries: number;
  petCacheEntries: number;
  coalesceReads: boolean;
  readConcurrency: number;
  /** Idempotency records are kept at least this long (ms). */
  idempotencyTtlMs: number;
  redisUrl: string | undefined;
  /** `REDIS_CLUSTER_NODES`: seed nodes of a Redis Cluster (instead of `redisUrl`). */
  redisClusterNodes: ClusterNodeAddress[] | undefined;
  rateLimit: { banThreshold: number; banSeconds: number; redisFailure: 'fallback' | 'refuse' };
  /** Express's `trust proxy`: false, a number of proxy hops, or trusted proxy addresses/CIDRs. */
  trustProxy: TrustProxy;
  metricsToken: string | undefined;
  /** Enables the admin API (`/admin/v1`); without it every admin route answers 404. */
  adminToken: string | undefined;
  shutdownTimeoutMs: number;
  databaseStartupTimeoutMs: number;
  /** SIGTERM: how long /readyz answers 503 while requests are still served, before connections close. */
  shutdownDrainMs: number;
  /** Bounded waits on the database (see docs/production.md). */
  databaseLimits: DatabaseLimits;
  /** Node HTTP server limits for slow and idle clients. */
  http: HttpLimits;
};

export interface DatabaseLimits {
  /** PostgreSQL pool size. */
  poolSize: number;
  /** PostgreSQL: longest wait for a pooled connection (or a new one to connect). */
  poolTimeoutMs: number;
  /** PostgreSQL statement_timeout (0: none). */
  statementTimeoutMs: number;
  /** PostgreSQL lock_timeout (0: none). */
  lockTimeoutMs: number;
  /** SQLite busy timeout: how long a write waits for another connection's write lock. */
  sqliteBusyTimeoutMs: number;
}

export interface HttpLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

export class ConfigError extends Error {}

/** Reads and validates the configuration once. The only place that reads `process.env`. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const blankToUndefined = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === '' ? undefined : v]));
  const parsed = EnvSchema.safeParse(blankToUndefined);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    database:
      e.DATABASE_URL.provider === 'postgresql' && e.DATABASE_DIRECT_URL !== undefined
        ? { ...e.DATABASE_URL, directUrl: e.DATABASE_DIRECT_URL }
        : e.DATABASE_URL,
    logLevel: e.LOG_LEVEL,
    keyCacheTtlMs: e.KEY_CACHE_TTL_MS,
    pageCacheEntries: e.PAGE_CACHE_ENTRIES,
    petCacheEntries: e.PET_CACHE_ENTRIES,
    coalesceReads: e.READ_COALESCING,
    readConcurrency: e.READ_CONCURRENCY,
    idempotencyTtlMs: e.IDEMPOTENCY_TTL_HOURS * 3_600_000,
    redisUrl: e.REDIS_URL,
    redisClusterNodes: e.REDIS_CLUSTER_NODES,
    rateLimit: {
      banThreshold: e.RATE_LIMIT_BAN_THRESHOLD,
      banSeconds: e.RATE_LIMIT_BAN_SECONDS,
      redisFailure: e.RATE_LIMIT_REDIS_FAILURE,
    },
    trustProxy: e.TRUST_PROXY,
    metricsToken: e.METRICS_TOKEN,
    adminToken: e.ADMIN_TOKEN,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    databaseStartupTimeoutMs: e.DATABASE_STARTUP_TIMEOUT_MS,
    shutdownDrainMs: e.SHUTDOWN_DRAIN_MS,
    databaseLimits: {
      poolSize: e.DATABASE_POOL_SIZE,
      poolTimeoutMs: e.DATABASE_POOL_TIMEOUT_MS,
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: e.DATABASE_LOCK_TIMEOUT_MS,
      sqliteBusyTimeoutMs: e.SQLITE_BUSY_TIMEOUT_MS,
    },
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.MAX_CONNECTIONS,
    },
  };
}
