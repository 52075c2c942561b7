/**
 * API key management: `pnpm -s keys <command>`, the admin API's operations through the same code (`KeyAdmin`) and the
 * same validation (the admin contract's schemas). Uses the server's configuration and migrates the database first.
 * A raw key is printed once, alone on the last line of stdout, and never stored or logged. Admin actions are logged
 * as JSON lines on stderr.
 */
import { PLAN_NAMES, SCOPES } from '@animal-store/contract';
import pino from 'pino';
import { ConfigError, loadConfig } from '../config/load.js';
import { openDatabase } from '../db/database.js';
import { AppError } from '../errors/app-error.js';
import { KeyAdmin } from '../keys/admin.js';
import { createLogger } from '../logger.js';
import { createSharedRateLimitStore } from '../rate-limiting/store.js';
import { readArguments, UsageError } from './arguments.js';
import { COMMANDS } from './key-commands.js';

const USAGE = `Usage:
  keys create --plan <${PLAN_NAMES.join('|')}> [--name TEXT] [--scopes ${SCOPES.join(',')}] [--per-minute N] [--per-day N]
              [--concurrent-requests N] [--expires-at DATE]
  keys list
  keys show <id>
  keys update <id> [--name TEXT | --no-name] [--scopes LIST] [--per-minute N] [--per-day N]
              [--concurrent-requests N | --no-concurrent-requests] [--expires-at DATE | --no-expiry]
  keys revoke <raw key or key id>
  keys rotate <id> [--overlap-seconds N]      (default 86400: the old key keeps working that long)
  keys usage <id>
  keys unban <id>`;

async function run(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) throw new UsageError(name ? `unknown command ${name}` : 'no command');
  // Everything the user typed is checked before the database is opened.
  const execute = command(readArguments(rest));

  const config = loadConfig();
  const logger = createLogger(config.logLevel, pino.destination({ fd: 2, sync: true }));
  const db = await openDatabase(config);
  // Counters and bans are visible from here only when they live in Redis; never fall back to an empty memory store.
  const limits = createSharedRateLimitStore(
    { ...config, rateLimit: { ...config.rateLimit, redisFailure: 'refuse' } },
    logger,
  );
  const admin = new KeyAdmin({ store: db.apiKeys, changes: db.keyChanges, limits, logger, via: 'cli' });
  try {
    await execute(admin, (text) => process.stdout.write(`${text}\n`));
  } finally {
    await limits?.close();
    await db.close();
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError || (err instanceof AppError && err.code === 'invalid_request')) {
    process.stderr.write(`keys: ${err.message}\n${USAGE}\n`);
    process.exit(64);
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`keys: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
