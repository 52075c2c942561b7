import type { Server } from 'node:http';
import { createApp } from './app.js';
import { createServer } from './http/server.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabaseWithRetry } from './db/database.js';
import { createLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { createRateLimitStore } from './rate-limiting.js';

/** The only file that listens: reads the configuration, wires the real dependencies, serves, shuts down gracefully. */
async function main(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const db = await openDatabaseWithRetry(config.database, {
    pageCacheEntries: config.pageCacheEntries,
    coalesceReads: config.coalesceReads,
    readConcurrency: config.readConcurrency,
    idempotencyTtlMs: config.idempotencyTtlMs,
    timeoutMs: config.databaseStartupTimeoutMs,
    onConnectionError: (err) => logger.warn({ err: err.message }, 'database connection lost; the pool replaces it'),
    onRetry: (err, attempt) =>
      logger.warn({ attempt, err: (err as Error).message }, 'database not reachable yet; retrying'),
  }).catch((err: unknown) => {
    throw new Error(`cannot open the database named by DATABASE_URL: ${(err as Error).message}`);
  });
  const metrics = new Metrics(db);
  const rateLimitStore = createRateLimitStore(config, logger);
  let shuttingDown = false;
  const app = createApp({
    db,
    logger,
    metrics,
    metricsToken: config.metricsToken,
    keyCacheTtlMs: config.keyCacheTtlMs,
    trustProxy: config.trustProxy,
    rateLimit: {
      store: rateLimitStore,
      banThreshold: config.rateLimit.banThreshold,
      banSeconds: config.rateLimit.banSeconds,
    },
    isShuttingDown: () => shuttingDown,
  });
  const server: Server = createServer(app).listen(config.port, config.host, () => {
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
  // process open until the shutdown deadline (server.close() only ends connections that are idle when it is called).
  server.prependListener('request', (_req, res) => {
    if (shuttingDown) res.setHeader('Connection', 'close');
  });
  server.on('error', (err) => {
    logger.fatal({ err: err.message }, 'cannot listen');
    process.exit(1);
  });

  const stop = (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    const force = setTimeout(() => {
      logger.warn(
        { timeoutMs: config.shutdownTimeoutMs },
        'requests still in flight at the shutdown deadline; closing them',
      );
      server.closeAllConnections();
    }, config.shutdownTimeoutMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      Promise.all([db.close(), rateLimitStore.close()]).then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (err: unknown) => {
          logger.error({ err: (err as Error).message }, 'error while closing');
          process.exit(1);
        },
      );
    });
    server.closeIdleConnections();
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
