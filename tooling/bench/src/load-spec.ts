/** What the parent asks of the load generator (load.ts) and what it answers: JSON over argv and IPC. */

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** The workload users produce, drawn per request (mix.ts). */
export interface MixSpec {
  /** Raw API keys; each request uses one at random. */
  keys: string[];
  /** Share of creates, 0 to 100. */
  createPercent: number;
  /** Cursors point after a random id from 1 to this. */
  maxId: number;
  /** Creates carry a fresh Idempotency-Key (as the client sends); default true. */
  idempotencyKeys?: boolean;
  /** Every request is the same list URL with the first key (today's headline, for comparison). */
  repeat?: boolean;
}

export interface LoadSpec {
  mode: 'closed' | 'open';
  /** Origin, e.g. http://127.0.0.1:3000 (127.0.0.1 only). */
  origin: string;
  /** Sent in turn (each connection cycles through them). */
  requests: LoadRequest[];
  connections: number;
  durationSec: number;
  /** Requests per second (open mode). */
  rate?: number;
  /** Closed mode: instead of `requests`, each request drawn at random from this mix. */
  mix?: MixSpec;
}

export interface LoadResult {
  ok: number;
  non2xx: number;
  errors: number;
  elapsedSec: number;
  /** 2xx answers per second. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  statusCodes: Record<string, number>;
}
