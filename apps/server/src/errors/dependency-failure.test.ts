import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RateLimitStoreUnavailableError } from '@animal-store/rate-limit';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyDependencyError, DependencyError, isTransient } from './dependency-failure.js';

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** The error `fn` rejects with (fails the test when it does not). */
async function failure(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

/** The error `fn` throws (fails the test when it does not). */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('classifyDependencyError on real errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dependency-errors-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('node-postgres: nothing listening on the port is "unreachable"', async () => {
    const client = new pg.Client({
      connectionString: 'postgresql://postgres@127.0.0.1:1/none',
      connectionTimeoutMillis: 2000,
    });
    expect(classifyDependencyError(await failure(() => client.connect()))).toBe('database_unreachable');
  });

  it('node-postgres: statement_timeout and lock_timeout are "timeout"; a saturated pool is "busy"', async () => {
    // A generous connect timeout for the timeouts' pool (a loaded machine connects slowly); the saturated pool's one
    // connection is established before its second query waits.
    const pool = new pg.Pool({
      connectionString: PG_URL,
      max: 1,
      connectionTimeoutMillis: 10_000,
      statement_timeout: 50,
      lock_timeout: 50,
    });
    const saturated = new pg.Pool({ connectionString: PG_URL, max: 1, connectionTimeoutMillis: 200 });
    const holder = new pg.Client({ connectionString: PG_URL });
    await holder.connect();
    try {
      expect(classifyDependencyError(await failure(() => pool.query('SELECT pg_sleep(2)')))).toBe('database_timeout');
      const lock = 0x13_0000 + Math.floor(Math.random() * 0xffff);
      await holder.query('SELECT pg_advisory_lock($1)', [lock]);
      expect(classifyDependencyError(await failure(() => pool.query('SELECT pg_advisory_lock($1)', [lock])))).toBe(
        'database_timeout',
      );
      await holder.query('SELECT pg_advisory_unlock($1)', [lock]);
      const held = await saturated.connect();
      try {
        expect(classifyDependencyError(await failure(() => saturated.query('SELECT 1')))).toBe('database_busy');
      } finally {
        held.release();
      }
    } finally {
      await holder.end();
      await Promise.all([pool.end(), saturated.end()]);
    }
  });
  it('better-sqlite3: a write lock held elsewhere is "busy", a read-only handle "read only"', () => {
    const file = join(dir, 'busy.db');
    const a = new BetterSqlite3(file);
    a.exec('CREATE TABLE t (x)');
    const b = new BetterSqlite3(file, { timeout: 10 });
    const ro = new BetterSqlite3(file, { readonly: true });
    try {
      a.exec('BEGIN IMMEDIATE');
      expect(classifyDependencyError(thrownBy(() => b.exec('BEGIN IMMEDIATE')))).toBe('database_busy');
      a.exec('ROLLBACK');
      expect(classifyDependencyError(thrownBy(() => ro.exec('INSERT INTO t VALUES (1)')))).toBe('database_read_only');
    } finally {
      a.close();
      b.close();
      ro.close();
    }
  });

  it('the rate-limit store in refuse mode', () => {
    expect(classifyDependencyError(new RateLimitStoreUnavailableError())).toBe('rate_limit_store');
  });

  it('errors wrapped as Prisma wraps them: a driver adapter cause, a P-code, nested causes', () => {
    expect(classifyDependencyError({ name: 'DriverAdapterError', cause: { kind: 'DatabaseNotReachable' } })).toBe(
      'database_unreachable',
    );
    expect(
      classifyDependencyError({
        code: 'P2010',
        meta: { driverAdapterError: { cause: { kind: 'postgres', code: '57014' } } },
      }),
    ).toBe('database_timeout');
    expect(classifyDependencyError({ cause: { kind: 'sqlite', extendedCode: 13 } })).toBe('disk_full');
    expect(classifyDependencyError({ cause: { kind: 'sqlite', extendedCode: 10 | (4 << 8) } })).toBe(
      'database_io_error',
    );
    expect(
      classifyDependencyError(new Error('x', { cause: Object.assign(new Error('disk'), { code: 'SQLITE_FULL' }) })),
    ).toBe('disk_full');
    expect(classifyDependencyError({ code: 'P2024' })).toBe('database_busy');
    // As Prisma 7 reports SQLITE_FULL from the better-sqlite3 adapter (seen on a full tmpfs).
    expect(
      classifyDependencyError({
        name: 'PrismaClientKnownRequestError',
        message:
          '\nInvalid `prisma.pet.create()` invocation:\n\n\nDatabase error. Code: `SQLITE_FULL`. Message: `database or disk is full`',
      }),
    ).toBe('disk_full');
  });

  it('leaves bugs and bad input alone (they stay 500 or are answered elsewhere)', () => {
    expect(classifyDependencyError(new TypeError('x is undefined'))).toBeUndefined();
    expect(classifyDependencyError({ code: '23505' })).toBeUndefined(); // unique violation: a bug of ours
    expect(classifyDependencyError({ code: 'SQLITE_CONSTRAINT_UNIQUE' })).toBeUndefined();
    expect(classifyDependencyError({ cause: { kind: 'UniqueConstraintViolation' } })).toBeUndefined();
    expect(classifyDependencyError(undefined)).toBeUndefined();
    const loop: { cause?: unknown } = {};
    loop.cause = loop;
    expect(classifyDependencyError(loop)).toBeUndefined();
  });
});

describe('errors of our own and start-up', () => {
  it('classifies a DependencyError by its reason, wrapped or not', () => {
    expect(classifyDependencyError(new DependencyError('database_busy', 'no read slot'))).toBe('database_busy');
    expect(classifyDependencyError(new Error('x', { cause: new DependencyError('database_timeout', 'slow') }))).toBe(
      'database_timeout',
    );
  });

  it('calls unreachable, busy and slow transient (start-up retries them), the rest not', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
      expect(isTransient({ code }), code).toBe(true);
    for (const code of ['57P03', '53300', 'SQLITE_BUSY']) expect(isTransient({ code }), code).toBe(true);
    expect(isTransient(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isTransient(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isTransient({ code: 'SQLITE_FULL' })).toBe(false);
    expect(isTransient({ code: '25006' })).toBe(false);
    expect(isTransient({ code: '28P01' })).toBe(false); // a wrong password: a setup to fix, not to wait out
    expect(isTransient(new Error('DATABASE_URL must start with file:'))).toBe(false);
  });
});
