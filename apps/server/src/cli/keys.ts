/**
 * API key management: `pnpm -s keys <command>`, the admin API's operations through the same code (`KeyAdmin`) and the
 * same validation (the admin contract's schemas). Uses the server's configuration and migrates the database first.
 * A raw key is printed once, alone on the last line of stdout, and never stored or logged. Admin actions are logged
 * as JSON lines on stderr.
 */
import { parseArgs } from 'node:util';
import { ApiKeyChanges, NewApiKey, PLAN_NAMES, RotateApiKey, SCOPES, type ApiKey } from '@animal-store/contract';
import pino from 'pino';
import type { z } from 'zod';
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { apiKeyView, KeyAdmin, KeyAdminError } from '../keys/admin.js';
import { looksLikeKey } from '../keys/format.js';
import { hashKey } from '../keys/resolver.js';
import { createLogger } from '../logger.js';
import { createRateLimitStore } from '../rate-limiting.js';

const USAGE = `Usage:
  keys create --plan <${PLAN_NAMES.join('|')}> [--name TEXT] [--scopes ${SCOPES.join(',')}] [--per-minute N] [--per-day N] [--expires-at DATE]
  keys list
  keys show <id>
  keys update <id> [--name TEXT | --no-name] [--scopes LIST] [--per-minute N] [--per-day N] [--expires-at DATE | --no-expiry]
  keys revoke <raw key or key id>
  keys rotate <id> [--overlap-seconds N]      (default 86400: the old key keeps working that long)
  keys usage <id>
  keys unban <id>`;

class UsageError extends Error {}

const COMMANDS = ['create', 'list', 'show', 'update', 'revoke', 'rotate', 'usage', 'unban'] as const;
type Command = (typeof COMMANDS)[number];

/** Flag of each body field, so that the contract's messages name what the user typed. */
const FLAGS: Record<string, string> = {
  plan: '--plan',
  name: '--name',
  scopes: '--scopes',
  perMinute: '--per-minute',
  perDay: '--per-day',
  expiresAt: '--expires-at',
  overlapSeconds: '--overlap-seconds',
};

function wholeNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(value)) throw new UsageError(`${flag} must be a whole number`);
  return Number(value);
}

function keyId(value: string | undefined): number {
  if (value === undefined || !/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > 2_147_483_647)
    throw new UsageError('a numeric key id is required');
  return Number(value);
}

/** Validates with the admin contract's schema, the very rules of the admin API. */
function validated<S extends z.ZodTypeAny>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data as z.infer<S>;
  const issue = parsed.error.issues[0]!;
  const field = String(issue.path[0] ?? '');
  throw new UsageError(FLAGS[field] ? `${FLAGS[field]}: ${issue.message}` : issue.message);
}

function describe(key: ApiKey): string {
  const now = Date.now();
  const state = key.revokedAt
    ? `revoked ${key.revokedAt}`
    : key.expiresAt && Date.parse(key.expiresAt) <= now
      ? `expired ${key.expiresAt}`
      : key.expiresAt
        ? `active until ${key.expiresAt}`
        : 'active';
  const limits = key.plan === 'enterprise' ? ` per-minute=${key.perMinute} per-day=${key.perDay}` : '';
  return [
    key.id,
    `${key.prefix}…`,
    `${key.plan}${limits}`,
    key.scopes.join(','),
    state,
    `created ${key.createdAt}`,
    `last used ${key.lastUsedAt ?? 'never'}`,
    key.name ?? '',
  ].join('\t');
}

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!COMMANDS.includes(command as Command))
    throw new UsageError(command ? `unknown command ${command}` : 'no command');
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      plan: { type: 'string' },
      name: { type: 'string' },
      'no-name': { type: 'boolean' },
      scopes: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      'expires-at': { type: 'string' },
      'no-expiry': { type: 'boolean' },
      'overlap-seconds': { type: 'string' },
    },
  });
  const fields = {
    name: values['no-name'] ? null : values.name,
    scopes: values.scopes?.split(',').map((scope) => scope.trim()),
    perMinute: wholeNumber(values['per-minute'], '--per-minute'),
    perDay: wholeNumber(values['per-day'], '--per-day'),
    expiresAt: values['no-expiry'] ? null : values['expires-at'],
  };
  const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));

  // Everything the user typed is checked before the database is opened.
  const input =
    command === 'create'
      ? { create: validated(NewApiKey, { plan: values.plan, ...defined }) }
      : command === 'update'
        ? { update: validated(ApiKeyChanges, defined) }
        : command === 'rotate'
          ? {
              rotate: validated(RotateApiKey, {
                overlapSeconds: wholeNumber(values['overlap-seconds'], '--overlap-seconds'),
              }),
            }
          : {};
  const wantsId = command !== 'create' && command !== 'list' && command !== 'revoke';
  const id = wantsId ? keyId(positionals[0]) : undefined;
  if (command === 'revoke' && positionals.length !== 1) throw new UsageError('revoke takes one raw key or key id');

  const config = loadConfig();
  const logger = createLogger(config.logLevel, pino.destination({ fd: 2, sync: true }));
  const db = await openDatabase(config.database);
  // Counters and bans are visible from here only when they live in Redis; never fall back to an empty memory store.
  const limits = config.redisUrl
    ? createRateLimitStore({ ...config, rateLimit: { ...config.rateLimit, redisFailure: 'refuse' } }, logger)
    : undefined;
  const admin = new KeyAdmin({ store: db.apiKeys, changes: db.keyChanges, limits, logger, via: 'cli' });
  const out = (text: string) => process.stdout.write(`${text}\n`);
  try {
    switch (command as Command) {
      case 'create': {
        const { key, secret } = await admin.create(input.create!);
        out(
          `Created key ${key.id} (${key.plan}${key.name ? `, ${key.name}` : ''}). It is shown once; store it now:\n${secret}`,
        );
        break;
      }
      case 'list': {
        const keys = [];
        for (
          let page = await admin.list({ limit: 1000 });
          page.length > 0;
          page = await admin.list({ limit: 1000, afterId: page.at(-1)!.id })
        )
          keys.push(...page);
        out(
          keys.length === 0
            ? 'No keys.'
            : `id\tprefix\tplan\tscopes\tstate\tcreated\tlast used\tname\n${keys.map((k) => describe(apiKeyView(k))).join('\n')}`,
        );
        break;
      }
      case 'show':
        out(JSON.stringify(apiKeyView(await admin.get(id!)), null, 2));
        break;
      case 'update':
        out(describe(apiKeyView(await admin.update(id!, input.update!))));
        break;
      case 'revoke': {
        const target = positionals[0] ?? '';
        const match = looksLikeKey(target)
          ? { hash: hashKey(target) }
          : /^[1-9][0-9]{0,9}$/.test(target)
            ? { id: Number(target) }
            : undefined;
        if (!match) throw new UsageError('revoke takes a raw key (ask_...) or a numeric key id');
        const key = await admin.revoke(match);
        out(`Revoked key ${key.id} (${key.prefix}…) at ${key.revokedAt?.toISOString()}.`);
        break;
      }
      case 'rotate': {
        const { key, secret } = await admin.rotate(id!, input.rotate!.overlapSeconds);
        out(
          `Rotated key ${id} into key ${key.id}; the old key stops working at its new expiry. The new key is shown once; store it now:\n${secret}`,
        );
        break;
      }
      case 'usage':
        out(JSON.stringify(await admin.usage(id!), null, 2));
        break;
      case 'unban':
        await admin.liftBan(id!);
        out(`Lifted the ban and cleared the counters of key ${id} (and of its rotation lineage).`);
        break;
    }
  } finally {
    await limits?.close();
    await db.close();
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError || (err instanceof KeyAdminError && err.code === 'invalid_request')) {
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
