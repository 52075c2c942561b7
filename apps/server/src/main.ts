import type { Server } from 'node:http';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { createLogger } from './logger.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const db = await openDatabase(config.database);
  const app = createApp({ db, logger, keyCacheTtlMs: config.keyCacheTtlMs, trustProxy: config.trustProxy });
  const server: Server = app.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info({ port, host: config.host, database: config.database.provider }, `listening on http://${config.host}:${port}`);
  });
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    server.close(() => {
      db.close().then(() => process.exit(0), () => process.exit(1));
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(`animal-store failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
