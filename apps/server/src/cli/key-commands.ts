import { ApiKeyChanges, NewApiKey, RotateApiKey, type ApiKey } from '@animal-store/contract';
import type { KeyAdmin } from '../keys/admin.js';
import { apiKeyView } from '../keys/view.js';
import { looksLikeKey } from '../keys/format.js';
import { hashKey } from '../keys/resolver.js';
import { keyId, UsageError, validated, wholeNumber, type Arguments } from './arguments.js';
import { printable, printableJson } from './printable.js';

type Out = (text: string) => void;
/** A command whose arguments were checked: what it does once the database is open. */
type Run = (admin: KeyAdmin, out: Out) => Promise<void>;
/** Checks what the user typed (throwing a UsageError) before anything is opened, and gives the command to run. */
type Command = (args: Arguments) => Run;

/** One line of `keys list`, tab-separated. */
function describe(key: ApiKey): string {
  const now = Date.now();
  const state = key.revokedAt
    ? `revoked ${key.revokedAt}`
    : key.expiresAt && Date.parse(key.expiresAt) <= now
      ? `expired ${key.expiresAt}`
      : key.expiresAt
        ? `active until ${key.expiresAt}`
        : 'active';
  const limits =
    key.plan === 'enterprise'
      ? ` per-minute=${key.perMinute} per-day=${key.perDay} concurrent-requests=${key.concurrentRequests}`
      : '';
  return [
    key.id,
    `${key.prefix}…`,
    `${key.plan}${limits}`,
    key.scopes.join(','),
    state,
    `created ${key.createdAt}`,
    `last used ${key.lastUsedAt ?? 'never'}`,
    printable(key.name ?? ''),
  ].join('\t');
}

async function allKeys(admin: KeyAdmin): Promise<ApiKey[]> {
  const keys = [];
  for (
    let page = await admin.list({ limit: 1000 });
    page.length > 0;
    page = await admin.list({ limit: 1000, afterId: page.at(-1)!.id })
  )
    keys.push(...page);
  return keys.map(apiKeyView);
}

/** The raw key (its hash) or the numeric id `revoke` was given. */
function revokeTarget(positionals: string[]): { hash: string } | { id: number } {
  if (positionals.length !== 1) throw new UsageError('revoke takes one raw key or key id');
  const target = positionals[0]!;
  if (looksLikeKey(target)) return { hash: hashKey(target) };
  if (/^[1-9][0-9]{0,9}$/.test(target)) return { id: Number(target) };
  throw new UsageError('revoke takes a raw key (ask_...) or a numeric key id');
}

/** The key CLI's commands, by name (see USAGE in keys.ts). */
export const COMMANDS: Record<string, Command> = {
  create: ({ values, fields }) => {
    const input = validated(NewApiKey, { plan: values.plan, ...fields });
    return async (admin, out) => {
      const { key, secret } = await admin.create(input);
      out(
        `Created key ${key.id} (${key.plan}${key.name ? `, ${printable(key.name)}` : ''}). It is shown once; store it now:\n${secret}`,
      );
    };
  },
  list: () => async (admin, out) => {
    const keys = await allKeys(admin);
    out(
      keys.length === 0
        ? 'No keys.'
        : `id\tprefix\tplan\tscopes\tstate\tcreated\tlast used\tname\n${keys.map(describe).join('\n')}`,
    );
  },
  show: ({ positionals }) => {
    const id = keyId(positionals[0]);
    return async (admin, out) => out(printableJson(apiKeyView(await admin.get(id))));
  },
  update: ({ positionals, fields }) => {
    const changes = validated(ApiKeyChanges, fields);
    const id = keyId(positionals[0]);
    return async (admin, out) => out(describe(apiKeyView(await admin.update(id, changes))));
  },
  revoke: ({ positionals }) => {
    const match = revokeTarget(positionals);
    return async (admin, out) => {
      const key = await admin.revoke(match);
      out(`Revoked key ${key.id} (${key.prefix}…) at ${key.revokedAt?.toISOString()}.`);
    };
  },
  rotate: ({ values, positionals }) => {
    const { overlapSeconds } = validated(RotateApiKey, {
      overlapSeconds: wholeNumber(values['overlap-seconds'], '--overlap-seconds'),
    });
    const id = keyId(positionals[0]);
    return async (admin, out) => {
      const { key, secret } = await admin.rotate(id, overlapSeconds);
      out(
        `Rotated key ${id} into key ${key.id}; the old key stops working at its new expiry. The new key is shown once; store it now:\n${secret}`,
      );
    };
  },
  usage: ({ positionals }) => {
    const id = keyId(positionals[0]);
    return async (admin, out) => out(JSON.stringify(await admin.usage(id), null, 2));
  },
  unban: ({ positionals }) => {
    const id = keyId(positionals[0]);
    return async (admin, out) => {
      await admin.liftBan(id);
      out(`Lifted the ban and cleared the counters of key ${id} (and of its rotation lineage).`);
    };
  },
};
