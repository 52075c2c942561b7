/**
 * API key management: `pnpm -s keys create|list|revoke`. Uses the same DATABASE_URL as the server and migrates it first.
 * The raw key is printed once, alone on the last line of stdout, and never stored or logged.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { PLANS, customLimitsProblem, isPlan, type Plan } from '@animal-store/rate-limit';
import type { ApiKeyRecord } from '../db/types.js';
import { createApiKey, hashKey, looksLikeKey } from '../keys.js';

const USAGE = `Usage:
  keys create --plan <${PLANS.join('|')}> [--per-minute N] [--per-day N] [--name TEXT]
  keys list
  keys revoke <raw key or key id>`;

class UsageError extends Error {}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > 2_147_483_647)
    throw new UsageError(`${flag} must be a whole number from 1 to 2147483647`);
  return Number(value);
}

function describe(key: ApiKeyRecord): string {
  const limits = key.plan === 'enterprise' ? ` per-minute=${key.perMinute ?? '-'} per-day=${key.perDay ?? '-'}` : '';
  const state = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active';
  return `${key.id}\t${key.prefix}…\t${key.plan}${limits}\t${state}\tcreated ${key.createdAt.toISOString()}\t${key.name ?? ''}`;
}

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      plan: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      name: { type: 'string' },
    },
  });
  if (command !== 'create' && command !== 'list' && command !== 'revoke')
    throw new UsageError(command ? `unknown command ${command}` : 'no command');

  let plan: Plan | undefined;
  let perMinute: number | undefined;
  let perDay: number | undefined;
  if (command === 'create') {
    if (!values.plan || !isPlan(values.plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
    plan = values.plan;
    perMinute = positiveInt(values['per-minute'], '--per-minute');
    perDay = positiveInt(values['per-day'], '--per-day');
    const problem = customLimitsProblem(plan, { perMinute, perDay });
    if (problem) throw new UsageError(`${problem} (--per-minute, --per-day)`);
  }
  if (command === 'revoke' && positionals.length !== 1) throw new UsageError('revoke takes one raw key or key id');

  const config = loadConfig();
  const db = await openDatabase(config.database);
  try {
    if (command === 'create' && plan) {
      const { raw, record } = await createApiKey(db.apiKeys, { plan, name: values.name, perMinute, perDay });
      process.stdout.write(
        `Created key ${record.id} (${record.plan}${record.name ? `, ${record.name}` : ''}). It is shown once; store it now:\n${raw}\n`,
      );
    } else if (command === 'list') {
      const keys = await db.apiKeys.list();
      process.stdout.write(
        keys.length === 0 ? 'No keys.\n' : `id\tprefix\tplan\tstate\tcreated\tname\n${keys.map(describe).join('\n')}\n`,
      );
    } else {
      const target = positionals[0] ?? '';
      const match = looksLikeKey(target)
        ? { hash: hashKey(target) }
        : /^[1-9][0-9]{0,9}$/.test(target)
          ? { id: Number(target) }
          : undefined;
      if (!match) throw new UsageError('revoke takes a raw key (ask_...) or a numeric key id');
      const record = await db.apiKeys.revoke(match, new Date());
      if (!record) {
        process.stderr.write('No such key.\n');
        process.exitCode = 1;
      } else {
        process.stdout.write(
          `Revoked key ${record.id} (${record.prefix}…) at ${record.revokedAt?.toISOString()}. Servers stop accepting it within their key cache time (KEY_CACHE_TTL_MS, default 5 s).\n`,
        );
      }
    }
  } finally {
    await db.close();
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
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
