import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config/load.js';
import { closeDependencies, openDependencies } from './lifecycle/dependencies.js';
import { listen, listenOps } from './lifecycle/listen.js';
import { installShutdown } from './lifecycle/shutdown.js';
import { startTracing } from './lifecycle/tracing.js';
import { createLogger } from './logger.js';

/** The only file that listens: reads the configuration, opens the dependencies, serves, shuts down gracefully. */
async function main(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  // Before the dependencies: Prisma's instrumentation is in place when its clients start.
  const tracing = await startTracing(config, logger);
  const deps = await openDependencies(config, logger);
  let stopping = false;
  const app = createApp({
    db: deps.db,
    logger,
    metrics: deps.metrics,
    metricsToken: config.metricsToken,
    keyCacheTtlMs: config.keyCacheTtlMs,
    lastUsed: deps.lastUsed,
    adminToken: config.adminToken,
    trustProxy: config.trustProxy,
    rateLimit: { store: deps.rateLimitStore, ...config.rateLimit },
    concurrency: deps.concurrency ?? false,
    overload: deps.overload,
    isShuttingDown: () => stopping,
  });
  const context = { logger, metrics: deps.metrics, database: deps.db.provider, admission: deps.overload?.admission };
  // The probes' port first: it answers before the API port takes traffic.
  if (config.opsPort !== undefined) await listenOps(config, { ...deps, logger, isShuttingDown: () => stopping });
  const server = listen(app, config, context);
  deps.overload?.monitor.start();
  installShutdown(server, {
    config,
    logger,
    onStopping: () => (stopping = true),
    closeDependencies: async () => {
      await closeDependencies(deps, logger);
      await tracing?.shutdown();
    },
  });
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
