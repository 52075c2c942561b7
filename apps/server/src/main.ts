import type { Server } from 'node:http';
import { createApp } from './app.js';
import { trackConnections } from './http/graceful-stop.js';
import { createServer } from './http/server.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabaseWithRetry } from './db/database.js';
import { createLogger } from './logger.js';
import { LAST_USED_FLUSH_MS, LastUsedRecorder } from './keys/last-used.js';
import { Metrics } from './metrics.js';
import { createRateLimitStore } from './rate-limiting.js';

/** The only file that listens: reads the configuration, wires the real dependencies, serves, shuts down gracefully. */
async function main(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const db = await openDatabaseWithRetry(config.database, {
    pageCacheEntries: config.pageCacheEntries,
    petCacheEntries: config.petCacheEntries,
    coalesceReads: config.coalesceReads,
    readConcurrency: config.readConcurrency,
    idempotencyTtlMs: config.idempotencyTtlMs,
    poolSize: config.databaseLimits.poolSize,
    limits: config.databaseLimits,
    onPoolerWithoutTimeouts: () =>
      logger.warn(
        'the database (a pooler) refuses statement_timeout and lock_timeout at connect: set them on the role; pg query_timeout still bounds queries',
      ),
    timeoutMs: config.databaseStartupTimeoutMs,
    onConnectionError: (err) => logger.warn({ err: err.message }, 'database connection lost; the pool replaces it'),
    onRetry: (err, attempt) =>
      logger.warn({ attempt, err: (err as Error).message }, 'database not reachable yet; retrying'),
  }).catch((err: unknown) => {
    throw new Error(`cannot open the database named by DATABASE_URL: ${(err as Error).message}`);
  });
  const metrics = new Metrics(db);
  const rateLimitStore = createRateLimitStore(config, logger);
  const lastUsed = new LastUsedRecorder(db.apiKeys, {
    intervalMs: LAST_USED_FLUSH_MS,
    onError: (err) =>
      logger.warn({ err: (err as Error).message }, 'could not record when keys were last used; retrying'),
  });
  let shuttingDown = false;
  const app = createApp({
    db,
    logger,
    metrics,
    metricsToken: config.metricsToken,
    keyCacheTtlMs: config.keyCacheTtlMs,
    lastUsed,
    adminToken: config.adminToken,
    trustProxy: config.trustProxy,
    rateLimit: {
      store: rateLimitStore,
      banThreshold: config.rateLimit.banThreshold,
      banSeconds: config.rateLimit.banSeconds,
    },
    isShuttingDown: () => shuttingDown,
  });
  // One line per burst when the connection cap is reached (not one per refused connection), and a counter.
  let lastDropLog = 0;
  const server: Server = createServer(app, {
    limits: config.http,
    onProtocolError: (status) => metrics.protocolErrors.inc({ status }),
    onConnectionDropped: () => {
      metrics.droppedConnections.inc();
      if (Date.now() - lastDropLog < 10_000) return;
      lastDropLog = Date.now();
      logger.warn({ maxConnections: config.http.maxConnections }, 'connection limit reached: refusing new connections');
    },
  }).listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info(
      {
        port,
        host: config.host,
        database: db.provider,
        rateLimitStore: config.redisClusterNodes ? 'redis-cluster' : config.redisUrl ? 'redis' : 'memory',
      },
      `listening on http://${config.host}:${port}`,
    );
  });
  // Once stopping, every answer closes its connection: keep-alive clients reconnect elsewhere instead of holding this
  // process open until the shutdown deadline.
  const connections = trackConnections(server);
  server.on('error', (err) => {
    logger.fatal({ err: err.message }, 'cannot listen');
    process.exit(1);
  });

  const finish = () => {
    const force = setTimeout(() => {
      logger.warn(
        { timeoutMs: config.shutdownTimeoutMs },
        'requests still in flight at the shutdown deadline; closing them',
      );
      connections.destroyAll();
    }, config.shutdownTimeoutMs);
    force.unref();
    logger.info('no new connections; finishing requests in flight');
    // A connection accepted before this point whose request is still on its way gets until the header timeout.
    connections.close({ freshGraceMs: config.http.headersTimeoutMs }).then(
      () => {
        clearTimeout(force);
        // The last uses noted since the last flush are written before the database closes.
        lastUsed
          .close()
          .catch((err: unknown) =>
            logger.warn({ err: (err as Error).message }, 'could not record when keys were last used'),
          )
          .then(() => Promise.all([db.close(), rateLimitStore.close()]))
          .then(
            () => {
              logger.info('stopped');
              process.exit(0);
            },
            (err: unknown) => {
              logger.error({ err: (err as Error).message }, 'error while closing');
              process.exit(1);
            },
          );
      },
      (err: unknown) => logger.error({ err: (err as Error).message }, 'error while closing the server'),
    );
  };

  // SIGTERM (orchestrators): /readyz answers 503 and answers close their connections for SHUTDOWN_DRAIN_MS while the
  // server still accepts, so load balancers notice before connections are refused; then stop. SIGINT (a terminal's
  // Ctrl-C) stops without the drain.
  const stop = (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    connections.beginStop();
    const drainMs = signal === 'SIGTERM' ? config.shutdownDrainMs : 0;
    logger.info({ signal, drainMs }, 'shutting down: /readyz answers 503; finishing requests in flight');
    if (drainMs === 0) finish();
    else setTimeout(finish, drainMs);
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : String(err));
  process.exit(2);
}
main(config).catch((err: unknown) => {
  console.error(`animal-store failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
