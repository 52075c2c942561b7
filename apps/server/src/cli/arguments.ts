import { parseArgs } from 'node:util';
import { MAX_KEY_ID } from '@animal-store/contract';
import type { z } from 'zod';

/** What the user typed wrong: printed with the usage, exit code 64. */
export class UsageError extends Error {}

/** Flag of each body field, so that the contract's messages name what the user typed. */
const FLAGS: Record<string, string> = {
  plan: '--plan',
  name: '--name',
  scopes: '--scopes',
  perMinute: '--per-minute',
  perDay: '--per-day',
  concurrentRequests: '--concurrent-requests',
  expiresAt: '--expires-at',
  overlapSeconds: '--overlap-seconds',
};

export function wholeNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(value)) throw new UsageError(`${flag} must be a whole number`);
  return Number(value);
}

export function keyId(value: string | undefined): number {
  if (value === undefined || !/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > MAX_KEY_ID)
    throw new UsageError('a numeric key id is required');
  return Number(value);
}

/** Validates with the admin contract's schema, the very rules of the admin API. */
export function validated<S extends z.ZodTypeAny>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data as z.infer<S>;
  const issue = parsed.error.issues[0]!;
  const field = String(issue.path[0] ?? '');
  throw new UsageError(FLAGS[field] ? `${FLAGS[field]}: ${issue.message}` : issue.message);
}

/** A command's arguments: its flags, its positionals, and the key fields the flags set (only those given). */
export interface Arguments {
  values: ReturnType<typeof parse>['values'];
  positionals: string[];
  fields: Record<string, unknown>;
}

const parse = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    options: {
      plan: { type: 'string' },
      name: { type: 'string' },
      'no-name': { type: 'boolean' },
      scopes: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      'concurrent-requests': { type: 'string' },
      'no-concurrent-requests': { type: 'boolean' },
      'expires-at': { type: 'string' },
      'no-expiry': { type: 'boolean' },
      'overlap-seconds': { type: 'string' },
    },
  });

export function readArguments(args: string[]): Arguments {
  const { values, positionals } = parse(args);
  const fields = {
    name: values['no-name'] ? null : values.name,
    scopes: values.scopes?.split(',').map((scope) => scope.trim()),
    perMinute: wholeNumber(values['per-minute'], '--per-minute'),
    perDay: wholeNumber(values['per-day'], '--per-day'),
    concurrentRequests: values['no-concurrent-requests']
      ? null
      : wholeNumber(values['concurrent-requests'], '--concurrent-requests'),
    expiresAt: values['no-expiry'] ? null : values['expires-at'],
  };
  return {
    values,
    positionals,
    fields: Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
  };
}
