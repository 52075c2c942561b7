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
    }
  }
}

export {};
