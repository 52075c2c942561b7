import { context, type SpanContext, SpanKind, trace } from '@opentelemetry/api';
import type { Metrics } from './metrics.js';
import { endSpan, inLeafSpan, sampledContext, sharedSpan, type SpanOptions } from './spans.js';

/**
 * Database and Redis work by the stable database conventions: a CLIENT span named `{operation} {collection}` (inside a
 * sampled request) and the `db_client_operation_duration_seconds` histogram. `db.query.text` is the statement with
 * its placeholders, never a value.
 */
export interface DbOperation {
  system: 'postgresql' | 'sqlite' | 'redis';
  /** `SELECT`, `INSERT`, `EVALSHA`... */
  operation: string;
  /** The table (`pets`), absent for Redis. */
  collection?: string;
  query?: string;
  /** The database name (PostgreSQL) or index (Redis). */
  namespace?: string;
  server?: { address: string; port: number };
}

let sink: Pick<Metrics, 'dbOperationDuration'> | undefined;

/** The metrics the database work of this process is counted in (the app's; the last app built wins in tests). */
export function useDbMetrics(metrics: Pick<Metrics, 'dbOperationDuration'> | undefined): void {
  sink = metrics;
}

function attributesOf(op: DbOperation) {
  return {
    'db.system.name': op.system,
    'db.operation.name': op.operation,
    ...(op.collection !== undefined && { 'db.collection.name': op.collection }),
    ...(op.query !== undefined && { 'db.query.text': op.query }),
    ...(op.namespace !== undefined && { 'db.namespace': op.namespace }),
    ...(op.server && { 'server.address': op.server.address, 'server.port': op.server.port }),
  };
}

const spanName = (op: DbOperation) => (op.collection ? `${op.operation} ${op.collection}` : op.operation);

// The operations are the modules' constants: each one's span options are made once, at its first sampled use.
const spanOptions = new WeakMap<DbOperation, SpanOptions>();
function spanOptionsOf(op: DbOperation): SpanOptions {
  let options = spanOptions.get(op);
  if (!options) {
    options = { kind: SpanKind.CLIENT, attributes: attributesOf(op) };
    spanOptions.set(op, options);
  }
  return options;
}

function observe(op: DbOperation, started: bigint, error?: unknown): void {
  if (!sink) return;
  const code = (error as { code?: unknown } | undefined)?.code;
  sink.dbOperationDuration.observe(
    {
      db_system_name: op.system,
      db_operation_name: op.operation,
      ...(error !== undefined && { error_type: typeof code === 'string' ? code : '_OTHER' }),
    },
    Number(process.hrtime.bigint() - started) / 1e9,
  );
}

/** One request's own database work (synchronous, as SQLite's, or a promise): one statement, so a leaf span. */
export function dbWork<T>(op: DbOperation, work: () => T): T {
  const started = process.hrtime.bigint();
  return inLeafSpan(
    spanName(op),
    () => spanOptionsOf(op),
    () => {
      let result: T;
      try {
        result = work();
      } catch (error) {
        observe(op, started, error);
        throw error;
      }
      if (result instanceof Promise)
        result.then(
          () => observe(op, started),
          (error: unknown) => observe(op, started, error),
        );
      else observe(op, started);
      return result;
    },
  );
}

/** What a member of shared work brings to its span: the sampled request it came from. */
export const memberContext = (): SpanContext | undefined => sampledContext();

/**
 * Work shared by several requests (a coalesced query, a group commit): ONE span, child of the first sampled member and
 * linked to each sampled member, with the number of members served.
 */
export function dbSharedWork<T>(op: DbOperation, members: (SpanContext | undefined)[], work: () => Promise<T>) {
  const started = process.hrtime.bigint();
  const span = sharedSpan(spanName(op), members, () => {
    const { kind, attributes } = spanOptionsOf(op);
    return { kind, attributes: { ...attributes, 'animal_store.batch.size': members.length } };
  });
  const running = span ? context.with(trace.setSpan(context.active(), span), work) : work();
  running.then(
    () => {
      observe(op, started);
      endSpan(span);
    },
    (error: unknown) => {
      observe(op, started, error);
      endSpan(span, error);
    },
  );
  return running;
}

/** A PostgreSQL operation on the pool's database (address, port and name from its connection string). */
export function postgresOperation(
  pool: { options: { connectionString?: string } },
  operation: string,
  query: string,
): DbOperation {
  const url = new URL(pool.options.connectionString ?? 'postgresql://localhost');
  return {
    system: 'postgresql',
    operation,
    collection: 'pets',
    query,
    namespace: decodeURIComponent(url.pathname.slice(1)) || 'postgres',
    server: { address: url.hostname, port: Number(url.port) || 5432 },
  };
}
