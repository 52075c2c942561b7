import { Counter, Gauge, Histogram, Registry, type RegistryContentType, collectDefaultMetrics } from 'prom-client';
import type { Database } from '../db/types.js';

/**
 * Prometheus metrics of one app instance, named by the convention in docs/operations.md: OpenTelemetry semantic
 * conventions translated to Prometheus where one exists (no prefix), `animal_store_` otherwise; every label from a
 * closed set. Own registry per instance, so tests can build several apps in one process. The registry is an
 * OpenMetrics one because exemplars need it; exposition.ts serves either format.
 */
export class Metrics {
  readonly registry = openMetricsRegistry();

  /** Semconv `http.server.request.duration`; exemplars carry the trace of a sampled request. */
  readonly requestDuration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP server requests by method, route pattern (absent when no route matched), status and error type (5xx)',
    labelNames: ['http_request_method', 'http_route', 'http_response_status_code', 'error_type'] as const,
    // The conventions' advice, with 1 ms and 2.5 ms in front: most answers here take a few milliseconds.
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
    enableExemplars: true,
    registers: [this.registry],
  });
  /** Semconv `http.server.active_requests`. */
  readonly activeRequests = this.gauge('http_server_active_requests', 'HTTP requests in flight by method', [
    'http_request_method',
  ]);
  readonly operationDuration = new Histogram({
    name: 'animal_store_operation_duration_seconds',
    help: 'API operations (/v1, /admin/v1) by contract operation, plan of the key (none: no valid key) and outcome (success, client_error, throttled, unavailable, error, aborted)',
    labelNames: ['operation', 'plan', 'outcome'] as const,
    buckets: [0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [this.registry],
  });
  readonly rateLimitRefusals = this.counter(
    'animal_store_rate_limit_refusals_total',
    'Requests refused by the rate limiter, by reason (rate_limit_exceeded | api_key_banned) and plan',
    ['reason', 'plan'],
  );
  readonly rateLimitBans = this.counter(
    'animal_store_rate_limit_bans_total',
    'Temporary bans started, by plan of the banned identity',
    ['plan'],
  );
  readonly rateLimitStoreFallbacks = this.counter(
    'animal_store_rate_limit_store_fallbacks_total',
    'Outages of Redis as the rate limiter saw them: switches to its in-memory store (or to refusing), one per outage',
  );
  readonly dependencyFailures = this.counter(
    'animal_store_dependency_failures_total',
    'Requests answered 503 because a dependency failed, by reason (database_unreachable, database_timeout, database_busy, disk_full, ...)',
    ['reason'],
  );
  readonly protocolErrors = this.counter(
    'animal_store_http_protocol_errors_total',
    "Requests refused by Node's HTTP layer before routing (400 malformed, 408 timeout, 431 headers too large)",
    ['http_response_status_code'],
  );
  readonly droppedConnections = this.counter(
    'animal_store_http_connections_dropped_total',
    'Connections refused because MAX_CONNECTIONS were open',
  );
  /** Semconv `db.client.operation.duration`: PostgreSQL, SQLite and Redis work the server waits for. */
  readonly dbOperationDuration = new Histogram({
    name: 'db_client_operation_duration_seconds',
    help: 'Database and Redis operations by system (postgresql, sqlite, redis), operation and error type',
    labelNames: ['db_system_name', 'db_operation_name', 'error_type'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });
  readonly apiKeyLookups = this.counter(
    'animal_store_api_key_lookups_total',
    'Bearer keys resolved from the in-process cache (hit) or the database (miss)',
    ['result'],
  );
  readonly ready = this.gauge('animal_store_ready', 'The last /readyz answer: 1 ready, 0 not (starts at 1)');
  readonly readyChanges = this.counter(
    'animal_store_ready_changes_total',
    'Times /readyz changed its answer (ready to not ready or back)',
  );

  /**
   * `db`: the database whose pool and read path are reported at each scrape (optional); `version`: the server's;
   * `poolMax`: the PostgreSQL pool's size (DATABASE_POOL_SIZE).
   */
  constructor(db?: Pick<Database, 'poolStats' | 'readStats'>, options: { version?: string; poolMax?: number } = {}) {
    collectDefaultMetrics({ register: this.registry });
    this.ready.set(1);
    new Gauge({
      name: 'animal_store_build_info',
      help: 'Always 1: the running version of the server',
      labelNames: ['version'] as const,
      registers: [this.registry],
    }).set({ version: options.version ?? 'unknown' }, 1);
    if (db) reportDatabase(this.registry, db, options.poolMax);
  }

  /** Records a /readyz answer: the gauge, and a change when it differs from the last one. */
  readiness(ready: boolean): void {
    const value = ready ? 1 : 0;
    if (this.#lastReady !== value) this.readyChanges.inc();
    this.#lastReady = value;
    this.ready.set(value);
  }
  #lastReady = 1;

  /** A counter of this registry (labels from a closed set). */
  private counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A gauge of this registry (labels from a closed set). */
  private gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }
}

/** A registry that can serve either format (exposition.ts switches it), created as OpenMetrics for the exemplars. */
function openMetricsRegistry(): Registry<RegistryContentType> {
  const registry = new Registry<RegistryContentType>();
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  return registry;
}

/** Pool use (semconv db.client.connection.*) and the read path's totals, read at each scrape: no work per request. */
function reportDatabase(
  registry: Registry<RegistryContentType>,
  db: Pick<Database, 'poolStats' | 'readStats'>,
  poolMax: number | undefined,
): void {
  if (db.poolStats) reportPool(registry, db.poolStats.bind(db), poolMax);
  if (db.readStats) reportReads(registry, db.readStats.bind(db));
}

type PoolStats = NonNullable<ReturnType<NonNullable<Database['poolStats']>>>;

/** The PostgreSQL pool's connections by state, its waiting queries and its size (absent while it reports none). */
function reportPool(
  registry: Registry<RegistryContentType>,
  poolStats: () => PoolStats | undefined,
  poolMax: number | undefined,
): void {
  const pool = { db_client_connection_pool_name: 'main' };
  const byState = ['db_client_connection_pool_name', 'db_client_connection_state'];
  const poolGauge = (
    name: string,
    help: string,
    set: (gauge: Gauge, stats: PoolStats) => void,
    labels = ['db_client_connection_pool_name'],
  ) =>
    new Gauge({
      name,
      help,
      labelNames: labels,
      registers: [registry],
      collect() {
        const stats = poolStats();
        if (stats) set(this, stats);
      },
    });
  poolGauge(
    'db_client_connection_count',
    'PostgreSQL pool connections by state (idle | used)',
    (gauge, stats) => {
      gauge.set({ ...pool, db_client_connection_state: 'idle' }, stats.idle);
      gauge.set({ ...pool, db_client_connection_state: 'used' }, stats.total - stats.idle);
    },
    byState,
  );
  poolGauge(
    'db_client_connection_pending_requests',
    'Queries waiting for a PostgreSQL pool connection',
    (gauge, stats) => gauge.set(pool, stats.waiting),
  );
  poolGauge('db_client_connection_max', 'Most connections the PostgreSQL pool opens', (gauge) => {
    if (poolMax !== undefined) gauge.set(pool, poolMax);
  });
}

/** The read path's totals: SQLite's page cache, PostgreSQL's coalesced reads (absent while the database has none). */
function reportReads(registry: Registry<RegistryContentType>, readStats: NonNullable<Database['readStats']>): void {
  totals(
    registry,
    'animal_store_pets_page_cache_lookups_total',
    'SQLite list pages answered from the page cache (hit) or read (miss)',
    'result',
    () => {
      const cache = readStats().pageCache;
      return cache && { hit: cache.hits, miss: cache.misses };
    },
  );
  totals(
    registry,
    'animal_store_pets_reads_total',
    'PostgreSQL list pages and gets read (query="own": queries sent; query="shared": further reads that went in a query with others)',
    'query',
    () => {
      const coalescing = readStats().coalescing;
      return coalescing && { own: coalescing.queries, shared: coalescing.reads - coalescing.queries };
    },
  );
}

/** A counter by one label whose values are totals kept elsewhere, read at each scrape (absent while `read` gives none). */
function totals(
  registry: Registry<RegistryContentType>,
  name: string,
  help: string,
  label: string,
  read: () => Record<string, number> | undefined,
): void {
  new Counter({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect() {
      const values = read();
      if (!values) return;
      this.reset();
      for (const [value, total] of Object.entries(values)) this.inc({ [label]: value }, total);
    },
  });
}
