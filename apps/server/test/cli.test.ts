import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_ROOT } from '../src/config/server-root.js';

// The built CLI and server, as `pnpm keys` and `pnpm start` run them (turbo builds before testing).
const KEYS = join(SERVER_ROOT, 'dist/cli/keys.js');
const MAIN = join(SERVER_ROOT, 'dist/main.js');
const dir = mkdtempSync(join(tmpdir(), 'cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(script: string, args: string[], env: Record<string, string>, cwd = SERVER_ROOT) {
  const result = spawnSync(process.execPath, [script, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('keys CLI', () => {
  const env = { DATABASE_URL: `file:${join(dir, 'keys.db')}` };

  it('creates a key and prints it alone on the last line; list never shows raw keys; revoke by key or id', () => {
    const created = run(KEYS, ['create', '--plan', 'pro', '--name', 'reporting'], env);
    expect(created.code).toBe(0);
    const raw = created.stdout.trimEnd().split('\n').at(-1)!;
    expect(raw).toMatch(/^ask_[0-9A-Za-z]{49}$/);

    const second = run(
      KEYS,
      ['create', '--plan', 'enterprise', '--per-minute', '5000', '--per-day', '1000000', '--concurrent-requests', '80'],
      env,
    );
    expect(second.code).toBe(0);

    const list = run(KEYS, ['list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('reporting');
    expect(list.stdout).toContain(raw.slice(0, 12));
    expect(list.stdout).not.toContain(raw.slice(12));
    expect(list.stdout).toContain('per-minute=5000 per-day=1000000 concurrent-requests=80');

    expect(run(KEYS, ['revoke', raw], env).stdout).toMatch(/^Revoked key 1 /);
    expect(run(KEYS, ['revoke', '2'], env).stdout).toMatch(/^Revoked key 2 /);
    expect(run(KEYS, ['list'], env).stdout.match(/revoked/g)).toHaveLength(2);
    expect(run(KEYS, ['revoke', '99'], env).code).toBe(1);
    // Seven CLI runs, each opening and migrating the database: a few seconds each on a loaded machine.
  }, 120_000);

  it("offers the admin API's operations: show, update, rotate (same settings, new key), usage; with its rules", () => {
    const created = run(
      KEYS,
      [
        'create',
        '--plan',
        'business',
        '--name',
        'dash',
        '--scopes',
        'pets:read',
        '--expires-at',
        '2040-01-01T00:00:00Z',
      ],
      env,
    );
    expect(created.code).toBe(0);
    const id = /^Created key (\d+) /.exec(created.stdout)?.[1];
    const raw = created.stdout.trimEnd().split('\n').at(-1)!;
    // The admin action is logged on stderr, without the key.
    expect(created.stderr).toContain('"action":"key.create"');
    expect(created.stderr).not.toContain(raw.slice(4));

    const shown = JSON.parse(run(KEYS, ['show', id!], env).stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({
      id: Number(id),
      name: 'dash',
      plan: 'business',
      scopes: ['pets:read'],
      expiresAt: '2040-01-01T00:00:00.000Z',
      lastUsedAt: null,
    });

    const updated = run(
      KEYS,
      ['update', id!, '--scopes', 'pets:read,pets:write', '--no-expiry', '--name', 'board'],
      env,
    );
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain('pets:read,pets:write');
    expect(updated.stdout).toContain('board');

    const rotated = run(KEYS, ['rotate', id!, '--overlap-seconds', '60'], env);
    expect(rotated.code).toBe(0);
    const fresh = rotated.stdout.trimEnd().split('\n').at(-1)!;
    expect(fresh).toMatch(/^ask_[0-9A-Za-z]{49}$/);
    expect(fresh).not.toBe(raw);
    const list = run(KEYS, ['list'], env).stdout;
    expect(list.match(/\tboard$/gm)).toHaveLength(2);
    expect(list).toMatch(/active until /);

    // The same rules as the admin API, with the flag named.
    const bad = run(KEYS, ['update', id!, '--per-day', '5'], env);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('enterprise');
    const badScope = run(KEYS, ['create', '--plan', 'pro', '--scopes', 'pets:delete'], env);
    expect(badScope.code).toBe(64);
    expect(badScope.stderr).toContain('--scopes');
    expect(run(KEYS, ['rotate', id!, '--overlap-seconds', '9999999'], env).stderr).toContain('--overlap-seconds');
    // Counters live in each server's memory without REDIS_URL: the CLI says so instead of showing zeros.
    const usage = run(KEYS, ['usage', id!], env);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain('REDIS_URL');
  }, 120_000);

  it.each([
    [['create'], '--plan'],
    [['create', '--plan', 'gold'], '--plan'],
    [['create', '--plan', 'free', '--per-minute', '5'], 'enterprise'],
    [['create', '--plan', 'pro', '--concurrent-requests', '5'], 'enterprise'],
    [
      ['create', '--plan', 'enterprise', '--per-minute', '5', '--per-day', '5', '--concurrent-requests', 'x'],
      '--concurrent-requests',
    ],
    [['create', '--plan', 'enterprise', '--per-minute', 'x', '--per-day', '5'], '--per-minute'],
    [['fly'], 'unknown command'],
  ])('refuses %j with a usage message', (args, message) => {
    const result = run(KEYS, args, env);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain(message);
  });

  it('reads a relative file: path against apps/server wherever it is started from', () => {
    const file = join(dir, 'relative.db');
    const rel = `file:${relative(SERVER_ROOT, file)}`;
    expect(run(KEYS, ['create', '--plan', 'free'], { DATABASE_URL: rel }, tmpdir()).code).toBe(0);
    expect(existsSync(file)).toBe(true);
    expect(run(KEYS, ['list'], { DATABASE_URL: rel }, '/').stdout).toContain('free');
  });
});

describe('server start-up', () => {
  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ LOG_LEVEL: 'chatty' }, 'LOG_LEVEL'],
    [{ DATABASE_URL: 'mysql://localhost/db' }, 'DATABASE_URL'],
  ])('exits non-zero on %j naming the variable', (env, name) => {
    const result = run(MAIN, [], env);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(name);
  });
});
