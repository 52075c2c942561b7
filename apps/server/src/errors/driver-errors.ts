/**
 * What the drivers below us say when a dependency fails, in their own shapes: node-postgres (SQLSTATE `code`, socket
 * `code`s, or only a message for its pool and client timeouts), better-sqlite3's `SqliteError` (`code` `SQLITE_*`),
 * Prisma (a `P1xxx`/`P2024` `code`, or a driver adapter's `cause` `{ kind, code | extendedCode }`) and Node's own
 * file-system codes. One error object at a time; dependency-failure.ts walks the chain of causes.
 */
import type { DependencyFailure } from './dependency-reasons.js';

/** Socket and DNS errors: the server cannot be reached (or went away mid-query). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** PostgreSQL SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html) that mean "retry later". */
function postgresState(state: string): DependencyFailure | undefined {
  if (state.startsWith('08')) return 'database_unreachable'; // connection exception
  if (state === '57P01' || state === '57P02' || state === '57P03') return 'database_unreachable'; // shutdown, crash, starting
  if (state === '57014') return 'database_timeout'; // statement_timeout (or a cancel)
  if (state === '55P03') return 'database_timeout'; // lock_timeout
  if (state === '40001' || state === '40P01') return 'database_busy'; // serialization failure, deadlock
  if (state === '53100') return 'disk_full';
  if (state.startsWith('53')) return 'database_busy'; // out of connections or memory
  if (state === '25006') return 'database_read_only'; // a standby, or default_transaction_read_only
  if (state.startsWith('58')) return 'database_io_error'; // system error, I/O error
  return undefined;
}

const SQLITE_PRIMARY_BY_NUMBER: Record<number, string> = {
  5: 'BUSY',
  6: 'LOCKED',
  7: 'NOMEM',
  8: 'READONLY',
  10: 'IOERR',
  13: 'FULL',
  14: 'CANTOPEN',
  15: 'PROTOCOL',
  22: 'NOLFS',
};

/** SQLite result codes by their primary (low byte) value, as better-sqlite3 names them or Prisma's adapter numbers them. */
function sqliteCode(code: string | number): DependencyFailure | undefined {
  const primary = typeof code === 'number' ? SQLITE_PRIMARY_BY_NUMBER[code & 0xff] : /^SQLITE_([A-Z]+)/.exec(code)?.[1];
  switch (primary) {
    case 'FULL':
      return 'disk_full';
    case 'BUSY':
    case 'LOCKED':
    case 'NOMEM':
    case 'PROTOCOL':
      return 'database_busy';
    case 'READONLY':
      return 'database_read_only';
    case 'IOERR':
    case 'CANTOPEN':
    case 'NOLFS':
      return 'database_io_error';
    default:
      return undefined;
  }
}

/** Prisma's own codes for an unreachable or saturated database (https://www.prisma.io/docs/orm/reference/error-reference). */
const PRISMA_CODES: Record<string, DependencyFailure> = {
  P1001: 'database_unreachable', // can't reach the database server
  P1002: 'database_timeout', // reached, but timed out
  P1008: 'database_timeout', // operation timed out
  P1011: 'database_unreachable', // TLS error
  P1017: 'database_unreachable', // server closed the connection
  P2024: 'database_busy', // timed out fetching a connection from the pool
  P2034: 'database_busy', // write conflict or deadlock: retry
};

/** Prisma driver adapters' error kinds (`DriverAdapterError.cause.kind`) that are not a bug of ours. */
const ADAPTER_KINDS: Record<string, DependencyFailure> = {
  DatabaseNotReachable: 'database_unreachable',
  ConnectionClosed: 'database_unreachable',
  SocketTimeout: 'database_timeout',
  TooManyConnections: 'database_busy',
  TransactionWriteConflict: 'database_busy',
  TransactionAlreadyClosed: 'database_busy',
};

/** node-postgres reports its own timeouts and lost connections with a message only. */
const PG_MESSAGES: [RegExp, DependencyFailure][] = [
  [/timeout exceeded when trying to connect/i, 'database_busy'], // pool acquire timeout
  [/Connection terminated due to connection timeout/i, 'database_unreachable'],
  [/Connection terminated/i, 'database_unreachable'],
  [/Query read timeout/i, 'database_timeout'], // query_timeout
  [/Client has encountered a connection error and is not queryable/i, 'database_unreachable'],
  [/Cannot use a pool after calling end on the pool/i, 'database_unreachable'], // shutting down
];

/** Prisma renders a driver error it has no code of its own for as "Database error. Code: `SQLITE_FULL`. ...". */
const PRISMA_RENDERED_CODE = /Database error\. Code: `([0-9A-Z_]{5,40})`/;

/** The fields of a driver's error this module reads. */
export type DriverErrorFields = {
  code?: unknown;
  kind?: unknown;
  extendedCode?: unknown;
  message?: unknown;
};

function byCode(code: string): DependencyFailure | undefined {
  if (NETWORK_CODES.has(code)) return 'database_unreachable';
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'disk_full';
  if (code === 'EROFS') return 'database_read_only';
  if (code === 'EIO') return 'database_io_error';
  if (code.startsWith('SQLITE_')) return sqliteCode(code);
  if (code in PRISMA_CODES) return PRISMA_CODES[code];
  if (/^[0-9A-Z]{5}$/.test(code)) return postgresState(code);
  return undefined;
}

/** The dependency failure one driver error object reports, or undefined. */
export function driverFailure(e: DriverErrorFields): DependencyFailure | undefined {
  const { code, kind } = e;
  if (typeof kind === 'string') {
    if (kind in ADAPTER_KINDS) return ADAPTER_KINDS[kind];
    if (kind === 'postgres' && typeof code === 'string') return postgresState(code);
    if (kind === 'sqlite' && typeof e.extendedCode === 'number') return sqliteCode(e.extendedCode);
  }
  const found = typeof code === 'string' ? byCode(code) : undefined;
  if (found || typeof e.message !== 'string') return found;
  for (const [pattern, failure] of PG_MESSAGES) if (pattern.test(e.message)) return failure;
  const rendered = PRISMA_RENDERED_CODE.exec(e.message)?.[1];
  return rendered === undefined ? undefined : byCode(rendered);
}
