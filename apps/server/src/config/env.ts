import { parseClusterNodes } from '@animal-store/rate-limit';
import { z } from 'zod';
import { isPostgresUrl, parseDatabaseUrl } from './database-url.js';
import { OTEL_VARIABLES } from './otel.js';
import { parseTrustProxy } from './trust-proxy.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** Where a key's requests in flight are counted: each process, the rate limits' shared store, or nowhere. */
export const CONCURRENCY_SCOPES = ['replica', 'shared', 'off'] as const;

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

const oneOf = <const T extends readonly [string, ...string[]]>(name: string, values: T) =>
  z.enum(values, { errorMap: () => ({ message: `${name} must be one of ${values.join(', ')}` }) });

/**
 * A secret sent as `Authorization: Bearer <token>`: visible ASCII only (no space, tab or other byte a client could not
 * send as one token, or a shell would strip), at least `min` of them.
 */
const bearerToken = (name: string, min: number) =>
  z
    .string()
    .regex(/^[\x21-\x7e]*$/, `${name} must be printable ASCII without spaces (visible characters only)`)
    .min(min, `${name} must be at least ${min} characters`);

/** A string turned into a value by `parse`, whose thrown message becomes the variable's configuration error. */
const parsedBy = <T>(parse: (value: string) => T, describe: (message: string) => string = (m) => m) =>
  z.string().transform((value, ctx): T => {
    try {
      return parse(value);
    } catch (err) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: describe((err as Error).message) });
      return z.NEVER;
    }
  });

/**
 * Every environment variable the service reads, with its rule and its default: the one place defaults are written
 * (a caller without a configuration takes them from `DEFAULTS` in defaults.ts, which is this schema read from an empty
 * environment). The README's configuration table is tested against this object.
 */
export const ENV_VARIABLES = {
  PORT: int('PORT', 0, 65535).default('3000'),
  HOST: z.string().min(1, 'HOST must not be empty').default('0.0.0.0'),
  DATABASE_URL: parsedBy(parseDatabaseUrl).default('file:./data/animal-store.db'),
  DATABASE_DIRECT_URL: z
    .string()
    .refine(isPostgresUrl, 'DATABASE_DIRECT_URL must be a postgres:// or postgresql:// URL')
    .optional(),
  LOG_LEVEL: oneOf('LOG_LEVEL', LOG_LEVELS).default('info'),
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
  REDIS_CLUSTER_NODES: parsedBy(
    parseClusterNodes,
    (message) => `REDIS_CLUSTER_NODES must be host:port,host:port,...: ${message}`,
  ).optional(),
  RATE_LIMIT_BAN_THRESHOLD: int('RATE_LIMIT_BAN_THRESHOLD', 1, 1_000_000).default('10'),
  RATE_LIMIT_BAN_SECONDS: int('RATE_LIMIT_BAN_SECONDS', 1, 31 * 86_400).default('900'),
  RATE_LIMIT_REDIS_FAILURE: z
    .enum(['fallback', 'refuse'], {
      errorMap: () => ({ message: 'RATE_LIMIT_REDIS_FAILURE must be fallback or refuse' }),
    })
    .default('fallback'),
  CONCURRENCY_LIMITS: oneOf('CONCURRENCY_LIMITS', CONCURRENCY_SCOPES).default('replica'),
  CONCURRENCY_LEASE_MS: int('CONCURRENCY_LEASE_MS', 1000, 3_600_000).default('60000'),
  LOAD_SHEDDING: bool('LOAD_SHEDDING').default('true'),
  LOAD_SHED_TARGET_DELAY_MS: int('LOAD_SHED_TARGET_DELAY_MS', 1, 10_000).default('5'),
  LOAD_SHED_EVENT_LOOP_DELAY_MS: int('LOAD_SHED_EVENT_LOOP_DELAY_MS', 5, 10_000).default('50'),
  LOAD_SHED_EVENT_LOOP_UTILIZATION: int('LOAD_SHED_EVENT_LOOP_UTILIZATION', 50, 100).default('97'),
  LOAD_SHED_MAX_IN_FLIGHT: int('LOAD_SHED_MAX_IN_FLIGHT', 0, 10_000_000).default('1000'),
  LOAD_SHED_MAX_DB_WAITING: int('LOAD_SHED_MAX_DB_WAITING', 0, 1_000_000).default('50'),
  LOAD_SHED_MIN_IN_FLIGHT: int('LOAD_SHED_MIN_IN_FLIGHT', 0, 1_000_000).default('8'),
  LOAD_SHED_TURN_BUDGET_MS: int('LOAD_SHED_TURN_BUDGET_MS', 0, 10_000).default('2'),
  LOAD_SHED_TURN_UTILIZATION: int('LOAD_SHED_TURN_UTILIZATION', 0, 100).default('80'),
  REFUSAL_HOLD_MS: int('REFUSAL_HOLD_MS', 0, 10_000).default('1000'),
  REFUSAL_HOLD_MAX_SOCKETS: int('REFUSAL_HOLD_MAX_SOCKETS', 0, 1_000_000).default('1000'),
  OPS_PORT: int('OPS_PORT', 0, 65535).optional(),
  LIVENESS_STALL_MS: int('LIVENESS_STALL_MS', 100, 3_600_000).default('5000'),
  TRUST_PROXY: parsedBy(parseTrustProxy).default('false'),
  METRICS_TOKEN: bearerToken('METRICS_TOKEN', 16).optional(),
  ADMIN_TOKEN: bearerToken('ADMIN_TOKEN', 32).optional(),
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
  // Tracing (off unless an OTLP endpoint is set): the standard OpenTelemetry variables, in otel.ts.
  ...OTEL_VARIABLES,
};

/** The environment, read: every variable checked, then the rules that tie two of them. */
export const EnvSchema = z.object(ENV_VARIABLES).superRefine((e, ctx) => {
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

export type Env = z.infer<typeof EnvSchema>;
