/** Response headers the service sends, described once here for the OpenAPI document and for the server and client. */

export const RATE_LIMIT_HEADERS = {
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
  retryAfter: 'Retry-After',
} as const;

/**
 * getPet is deprecated (RFC 9745) from 2026-01-01T00:00:00Z, the date interface 1.0.0 marked it so, and is announced
 * for removal (RFC 8594 Sunset) on 5 December 2030. Its successor is the list operation with a `status` filter.
 */
export const GET_PET_DEPRECATION = {
  deprecatedAt: new Date('2026-01-01T00:00:00Z'),
  sunsetAt: new Date('2030-12-05T00:00:00Z'),
  successorPath: '/v1/pets',
  /** `Deprecation` header value: an RFC 9651 date, `@` + Unix seconds. */
  deprecationHeader: `@${Date.UTC(2026, 0, 1) / 1000}`,
  /** `Sunset` header value: an HTTP-date. */
  sunsetHeader: 'Thu, 05 Dec 2030 00:00:00 GMT',
  linkHeader: '</v1/pets>; rel="successor-version"',
} as const;

type HeaderDoc = { description: string; schema: { type: 'integer' | 'string' } };

export const RATE_LIMIT_HEADER_DOCS: Record<string, HeaderDoc> = {
  [RATE_LIMIT_HEADERS.limit]: {
    description: 'Request quota of the most restrictive window (the one with the fewest remaining requests).',
    schema: { type: 'integer' },
  },
  [RATE_LIMIT_HEADERS.remaining]: {
    description: 'Requests left in that window.',
    schema: { type: 'integer' },
  },
  [RATE_LIMIT_HEADERS.reset]: {
    description: 'Unix timestamp (seconds) at which that window resets.',
    schema: { type: 'integer' },
  },
};

export const RETRY_AFTER_HEADER_DOCS: Record<string, HeaderDoc> = {
  [RATE_LIMIT_HEADERS.retryAfter]: {
    description: 'Whole seconds to wait before retrying (the refusing window reset, or the end of a temporary ban).',
    schema: { type: 'integer' },
  },
};

export const DEPRECATION_HEADER_DOCS: Record<string, HeaderDoc> = {
  Deprecation: {
    description: `RFC 9745: deprecated since ${GET_PET_DEPRECATION.deprecatedAt.toISOString()}.`,
    schema: { type: 'string' },
  },
  Sunset: { description: 'RFC 8594: the operation is removed at this date.', schema: { type: 'string' } },
  Link: { description: 'The successor operation (rel="successor-version").', schema: { type: 'string' } },
};

export const NEXT_PAGE_HEADER_DOCS: Record<string, HeaderDoc> = {
  Link: {
    description: 'Present when more pets match: `<url>; rel="next"` with an opaque cursor, keeping limit and status.',
    schema: { type: 'string' },
  },
};

export const LOCATION_HEADER_DOCS: Record<string, HeaderDoc> = {
  Location: { description: 'Path of the created pet.', schema: { type: 'string' } },
};

export const IDEMPOTENCY_HEADERS = {
  key: 'Idempotency-Key',
  replayed: 'Idempotent-Replayed',
} as const;

export const CREATED_HEADER_DOCS: Record<string, HeaderDoc> = {
  ...LOCATION_HEADER_DOCS,
  [IDEMPOTENCY_HEADERS.replayed]: {
    description:
      '`true` when this is the stored answer of an earlier request with the same `Idempotency-Key` (no new animal).',
    schema: { type: 'string' },
  },
};

export const IN_USE_RETRY_AFTER_HEADER_DOCS: Record<string, HeaderDoc> = {
  [RATE_LIMIT_HEADERS.retryAfter]: {
    description: 'Whole seconds to wait before sending the request again with the same key.',
    schema: { type: 'integer' },
  },
};
