import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from './db/types.js';

/** Prometheus metrics of one app instance (its own registry, so tests can build several apps in one process). */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route (contract path or "unmatched"), method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly rateLimitRefusals = new Counter({
    name: 'rate_limit_refusals_total',
    help: 'Requests refused by the rate limiter, by reason (rate_limit_exceeded | api_key_banned)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly rateLimitBans = new Counter({
    name: 'rate_limit_bans_total',
    help: 'Temporary bans started',
    registers: [this.registry],
  });
  readonly dependencyFailures = new Counter({
    name: 'dependency_failures_total',
    help: 'Requests answered 503 because a dependency failed, by reason (database_unreachable, database_timeout, database_busy, disk_full, ...)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly protocolErrors = new Counter({
    name: 'http_protocol_errors_total',
    help: "Requests refused by Node's HTTP layer before routing (400 malformed, 408 timeout, 431 headers too large), by status",
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  readonly droppedConnections = new Counter({
    name: 'http_connections_dropped_total',
    help: 'Connections refused because MAX_CONNECTIONS were open',
    registers: [this.registry],
  });
  readonly redisFallbacks = new Counter({
    name: 'rate_limit_redis_fallbacks_total',
    help: 'Times the rate limiter fell back from Redis to its in-memory store (or refused) because Redis failed',
    registers: [this.registry],
  });

  /** `db`: the database whose pool and read path are reported at each scrape (optional). */
  constructor(db?: Pick<Database, 'poolStats' | 'readStats'>) {
    collectDefaultMetrics({ register: this.registry });
    const poolStats = db?.poolStats?.bind(db);
    const readStats = db?.readStats?.bind(db);
    if (readStats) {
      // Totals kept by the read path itself (no work per request here), copied into counters when scraped.
      this.#totals(
        'pets_page_cache_lookups_total',
        'SQLite list pages answered from the page cache (hit) or read from the database (miss)',
        'result',
        () => {
          const cache = readStats().pageCache;
          return cache && { hit: cache.hits, miss: cache.misses };
        },
      );
      this.#totals(
        'pets_reads_total',
        'PostgreSQL list pages and gets read (query="own": queries sent; query="shared": further reads that went in a query with others)',
        'query',
        () => {
          const coalescing = readStats().coalescing;
          return coalescing && { own: coalescing.queries, shared: coalescing.reads - coalescing.queries };
        },
      );
    }
    if (poolStats) {
      new Gauge({
        name: 'db_pool_connections',
        help: 'Database pool connections by state (total | idle | waiting clients)',
        labelNames: ['state'] as const,
        registers: [this.registry],
        collect() {
          const stats = poolStats();
          if (!stats) return;
          this.set({ state: 'total' }, stats.total);
          this.set({ state: 'idle' }, stats.idle);
          this.set({ state: 'waiting' }, stats.waiting);
        },
      });
    }
  }

  /** A counter by one label whose values are totals kept elsewhere, read at each scrape (absent while `read` gives none). */
  #totals(name: string, help: string, label: string, read: () => Record<string, number> | undefined): void {
    new Counter({
      name,
      help,
      labelNames: [label],
      registers: [this.registry],
      collect() {
        const totals = read();
        if (!totals) return;
        this.reset();
        for (const [value, total] of Object.entries(totals)) this.inc({ [label]: value }, total);
      },
    });
  }
}
