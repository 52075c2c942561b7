import type { RateLimitDecision } from '@animal-store/rate-limit';
import type { ApiKeyRecord } from './db/types.js';

declare global {
  namespace Express {
    interface Request {
      /** Request id: the client's `X-Request-Id` when well-formed, generated otherwise. */
      id: string;
      /** process.hrtime.bigint() when the request arrived (latency metric and log line). */
      startedAt: bigint;
      /** The active API key of this request: undefined before resolution, null when missing or invalid. */
      apiKey?: ApiKeyRecord | null;
      /**
       * Why the key could not be resolved, decided after the rate limiter (so the answer carries its headers): several
       * Authorization headers (400), or the key lookup failed (a dependency failure: 503).
       */
      apiKeyProblem?: 'duplicate_authorization' | { lookupFailed: unknown };
      /** True when the bearer key exists but has expired (its 401 says so). */
      apiKeyExpired?: boolean;
      /**
       * What the rate limiter charged this request (an allowed decision), so that a request the service fails to serve
       * for reasons of its own (a dependency failure) can be refunded: it never counts against the client.
       */
      rateLimitCharge?: RateLimitDecision;
      /** The contract route being served (set by ts-rest before the route's handlers). */
      tsRestRoute?: { metadata?: unknown; deprecated?: boolean };
    }
  }
}

export {};
