/**
 * Thrown (in `refuse` mode) when the rate-limit store cannot answer. The
 * middleware passes it to `next(err)`; map it to a 503 `service_unavailable` response.
 */
export class RateLimitStoreUnavailableError extends Error {
  readonly status = 503 as const;
  readonly code = 'service_unavailable' as const;

  constructor(message = 'Rate limiting is temporarily unavailable', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RateLimitStoreUnavailableError';
  }
}
