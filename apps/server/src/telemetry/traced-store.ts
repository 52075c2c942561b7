import type { RateLimitStore, StoreRequest, StoreResult } from '@animal-store/rate-limit';
import type { Span } from '@opentelemetry/api';
import { dbWork, type DbOperation } from './db-telemetry.js';
import { activeTracer, addAttributes, inLeafSpan, inSampledTrace, inSpan } from './spans.js';

const NO_OPTIONS = Object.freeze({});

/**
 * The rate limiter's work in traces: each decision an INTERNAL `rate_limit` span (which store answered, and how), and
 * with Redis its command a CLIENT span by the database conventions (`EVALSHA`; never the keys or arguments, which
 * name identities). With tracing off at construction, `tracedDecisions` is the store itself.
 */
export function tracedDecisions(store: RateLimitStore): RateLimitStore {
  if (!activeTracer()) return store;
  const described = (span: Span | undefined, result: StoreResult) => {
    if (span)
      addAttributes(span, {
        'animal_store.rate_limit.store': result.source,
        'animal_store.rate_limit.outcome': result.outcome,
      });
    return result;
  };
  const consumeSync = store.consumeSync?.bind(store);
  // Unsampled, a decision goes straight to the store: no closure, no span, no step chained after its promise.
  return {
    name: store.name,
    consume: (request: StoreRequest) =>
      inSampledTrace()
        ? inSpan('rate_limit', NO_OPTIONS, (span) => store.consume(request).then((result) => described(span, result)))
        : store.consume(request),
    ...(consumeSync && {
      consumeSync: (request: StoreRequest) =>
        inSampledTrace()
          ? inLeafSpan('rate_limit', NO_OPTIONS, (span) => described(span, consumeSync(request)))
          : consumeSync(request),
    }),
    refund: (request) => store.refund(request),
    resetKey: (key) => store.resetKey(key),
    close: () => store.close(),
  };
}

/** A Redis store whose decisions (one EVALSHA each) are timed and traced as database work. */
export function tracedRedis(store: RateLimitStore, redisUrl: string | undefined): RateLimitStore {
  const operation: DbOperation = { system: 'redis', operation: 'EVALSHA', ...redisTarget(redisUrl) };
  return {
    name: store.name,
    consume: (request) => dbWork(operation, () => store.consume(request)),
    refund: (request) => store.refund(request),
    resetKey: (key) => store.resetKey(key),
    close: () => store.close(),
  };
}

/** Address, port and database index of a single Redis; nothing for a cluster (each command goes to its slot's node). */
function redisTarget(redisUrl: string | undefined): Pick<DbOperation, 'server' | 'namespace'> {
  if (!redisUrl) return {};
  const url = new URL(redisUrl);
  return {
    server: { address: url.hostname, port: Number(url.port) || 6379 },
    namespace: url.pathname.slice(1) || '0',
  };
}
