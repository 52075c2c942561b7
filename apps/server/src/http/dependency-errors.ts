/**
 * Tells a failing dependency (the database down, slow, saturated, out of disk or read-only; the rate-limit store in
 * refuse mode) from a bug. The error handler answers the first kind 503 `service_unavailable` with `Retry-After`, so
 * clients retry, and logs one line without a stack; anything not recognised here stays a 500.
 *
 * Errors arrive in several shapes: node-postgres errors (SQLSTATE `code`, socket `code`s, or only a message for its
 * pool and client timeouts), better-sqlite3's `SqliteError` (`code` `SQLITE_*`), Prisma's errors (a `P1xxx`/`P2024`
 * `code`, or a driver adapter's `cause` `{ kind, code | extendedCode }`), AggregateErrors of several addresses, and
 * Node's own file-system codes. The chain of `cause`s (and Prisma's `meta.driverAdapterError`) is walked to a bounded
 * depth.
 */

/** Why a dependency failed: the `reason` label of `dependency_failures_total` and the client's message. */
export type DependencyFailure =
  | 'database_unreachable'
  | 'database_timeout'
  | 'database_busy'
  | 'disk_full'
  | 'database_read_only'
  | 'database_io_error'
  | 'rate_limit_store';

/** The client's message for each reason: says what is wrong and that retrying is right, names no library. */
export const FAILURE_MESSAGE: Record<DependencyFailure, string> = {
  database_unreachable: 'The database is unreachable; retry later',
  database_timeout: 'The database did not answer in time; retry later',
  database_busy: 'The service is busy; retry later',
  disk_full: 'The database is out of storage space; retry later',
  database_read_only: 'The database is read-only at the moment; retry later',
  database_io_error: 'The database could not read or write its storage; retry later',
  rate_limit_store: 'Rate limiting is temporarily unavailable; retry later',
};

/** Seconds a client should wait before retrying, by reason: short for congestion, longer for outages. */
export const RETRY_AFTER_SECONDS: Record<DependencyFailure, number> = {
  database_unreachable: 5,
  database_timeout: 2,
  database_busy: 1,
  disk_full: 30,
  database_read_only: 30,
  database_io_error: 5,
  rate_limit_store: 1,
};

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

type Inspectable = {
  code?: unknown;
  kind?: unknown;
  extendedCode?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  meta?: unknown;
  name?: unknown;
};

function classifyOne(e: Inspectable): DependencyFailure | undefined {
  if (
    e.name === 'RateLimitStoreUnavailableError' ||
    (e.code === 'service_unavailable' && (e as { status?: unknown }).status === 503)
  ) {
    return 'rate_limit_store';
  }
  const { code, kind } = e;
  if (typeof kind === 'string') {
    if (kind in ADAPTER_KINDS) return ADAPTER_KINDS[kind];
    if (kind === 'postgres' && typeof code === 'string') return postgresState(code);
    if (kind === 'sqlite' && typeof e.extendedCode === 'number') return sqliteCode(e.extendedCode);
  }
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return 'database_unreachable';
    if (code === 'ENOSPC' || code === 'EDQUOT') return 'disk_full';
    if (code === 'EROFS') return 'database_read_only';
    if (code === 'EIO') return 'database_io_error';
    if (code === 'DATABASE_BUSY') return 'database_busy'; // our own wait for a read slot (db/busy-error.ts)
    if (code.startsWith('SQLITE_')) return sqliteCode(code);
    if (code in PRISMA_CODES) return PRISMA_CODES[code];
    if (/^[0-9A-Z]{5}$/.test(code)) {
      const state = postgresState(code);
      if (state) return state;
    }
  }
  if (typeof e.message === 'string') {
    for (const [pattern, failure] of PG_MESSAGES) if (pattern.test(e.message)) return failure;
    // Prisma renders a driver error it has no code of its own for as "Database error. Code: `SQLITE_FULL`. ...".
    const rendered = PRISMA_RENDERED_CODE.exec(e.message)?.[1];
    if (rendered !== undefined) return classifyOne({ code: rendered });
  }
  return undefined;
}

const PRISMA_RENDERED_CODE = /Database error\. Code: `([0-9A-Z_]{5,40})`/;

/** The dependency failure behind `err`, or undefined when it is something else (a bug, bad input handled elsewhere). */
export function classifyDependencyError(err: unknown): DependencyFailure | undefined {
  const queue: unknown[] = [err];
  const seen = new Set<unknown>();
  for (let i = 0; i < queue.length && i < 16; i++) {
    const e = queue[i];
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    const inspectable = e as Inspectable;
    const found = classifyOne(inspectable);
    if (found) return found;
    if (inspectable.cause !== undefined) queue.push(inspectable.cause);
    if (Array.isArray(inspectable.errors)) queue.push(...(inspectable.errors as unknown[]));
    const meta = inspectable.meta as { driverAdapterError?: unknown } | undefined;
    if (meta && typeof meta === 'object' && meta.driverAdapterError !== undefined) queue.push(meta.driverAdapterError);
  }
  return undefined;
}

/** An error in a few log fields, without its stack: its code, and its message's last line (Prisma's message ends with the cause). */
export function briefly(err: unknown): { code?: string; err: string } {
  const message = err instanceof Error ? err.message : String(err);
  const lines = message
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const code = (err as { code?: unknown } | null)?.code;
  return { ...(typeof code === 'string' && { code }), err: (lines.at(-1) ?? '').slice(0, 200) };
}
