import type { ClusterNodeAddress } from '@animal-store/rate-limit';
import type { DatabaseTarget } from './database-url.js';
import { EnvSchema, type CONCURRENCY_SCOPES, type Env, type LOG_LEVELS } from './env.js';
import { tracingConfig, type TracingConfig } from './otel.js';
import type { SaturationThresholds } from '../overload/pressure.js';
import type { HoldSettings } from '../overload/hold.js';
import type { TrustProxy } from './trust-proxy.js';

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
  rateLimit: RateLimitSettings;
  /** Requests of one key in flight at once (the plan's number): where they are counted, and a lease's life. */
  concurrency: { scope: (typeof CONCURRENCY_SCOPES)[number]; leaseMs: number };
  /** Admission control from the process's own saturation (overload/): on or off, and where each signal saturates. */
  loadShedding: {
    enabled: boolean;
    thresholds: SaturationThresholds;
    /**
     * The work one turn of the event loop admits (ms) before it sheds below Enterprise (overload/turn.ts; 0: off), only
     * while the loop was busy at least `utilization` (0..1) of the last sample.
     */
    turn: { budgetMs: number; utilization: number };
    hold: HoldSettings;
  };
  /** A second port serving only /healthz, /readyz and /metrics, whose queue no flood of API connections fills. */
  opsPort: number | undefined;
  /** OPS_PORT's /healthz answers 503 once the main event loop has not run for this long (ms): wedged. */
  livenessStallMs: number;
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
  /** OpenTelemetry tracing from the standard OTEL_* variables (otel.ts): off unless an endpoint is set. */
  tracing: TracingConfig;
};

export interface RateLimitSettings {
  /** Refusals tolerated within one clock minute; the next one bans. */
  banThreshold: number;
  banSeconds: number;
  /** While Redis is unreachable: limit in each replica's memory, or refuse with 503. */
  redisFailure: 'fallback' | 'refuse';
}

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
  return configOf(parsed.data);
}

/** The validated environment, in the shape the service uses. */
function configOf(e: Env): Config {
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
    concurrency: { scope: e.CONCURRENCY_LIMITS, leaseMs: e.CONCURRENCY_LEASE_MS },
    loadShedding: {
      enabled: e.LOAD_SHEDDING,
      thresholds: {
        targetDelayMs: e.LOAD_SHED_TARGET_DELAY_MS,
        eventLoopDelayMs: e.LOAD_SHED_EVENT_LOOP_DELAY_MS,
        eventLoopUtilization: e.LOAD_SHED_EVENT_LOOP_UTILIZATION / 100,
        maxInFlight: e.LOAD_SHED_MAX_IN_FLIGHT,
        maxDbWaiting: e.LOAD_SHED_MAX_DB_WAITING,
        minInFlight: e.LOAD_SHED_MIN_IN_FLIGHT,
      },
      turn: { budgetMs: e.LOAD_SHED_TURN_BUDGET_MS, utilization: e.LOAD_SHED_TURN_UTILIZATION / 100 },
      hold: { ms: e.REFUSAL_HOLD_MS, maxSockets: e.REFUSAL_HOLD_MAX_SOCKETS },
    },
    opsPort: e.OPS_PORT,
    livenessStallMs: e.LIVENESS_STALL_MS,
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
    tracing: tracingConfig(e),
  };
}
