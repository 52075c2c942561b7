import { initContract } from '@ts-rest/core';
import { ErrorBody } from './errors.js';
import { RateLimitStatus, type Scope } from './keys.js';
import { CreatePetHeaders, ListPetsQuery, NewPet, Pet, PetIdParams, Pets } from './schemas.js';

const c = initContract();

/** Version prefix of every operation. */
export const API_PREFIX = '/v1';

/** What the OpenAPI generator needs to know about a route beyond its schemas. */
export interface RouteDocs {
  /** Description of each response status. */
  responses: Record<number, string>;
  /** Response headers beyond the rate-limit ones, by status. */
  headers?: Record<number, 'nextPage' | 'location' | 'created' | 'retryAfter'>;
  /** Description of the request body, where there is one. */
  requestBody?: string;
  /** The scope a key needs for the operation (403 `insufficient_scope` without it). */
  scope?: Scope;
}

const commonResponses = {
  401: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
};

const common = {
  401: 'Missing, unknown, revoked or expired API key (an expired one is told so).',
  429:
    'Rate limit exceeded (`rate_limit_exceeded`), API key temporarily banned (`api_key_banned`), or too many requests ' +
    'of this key in flight at once (`concurrency_limit_exceeded`). See Retry-After.',
  500: 'Unexpected failure (`internal_error`).',
  503:
    'The service cannot answer right now (`service_unavailable`): it is overloaded, or a dependency (database, ' +
    'rate-limit store) failed. See Retry-After.',
};

const scopeMissing = (scope: Scope) =>
  `The key lacks the \`${scope}\` scope (\`insufficient_scope\`); \`WWW-Authenticate\` names it (RFC 6750).`;

export const contract = c.router(
  {
    listPets: {
      method: 'GET',
      path: '/pets',
      query: ListPetsQuery,
      summary: 'List animals',
      description:
        'Returns animals ordered by id ascending, at most `limit` of them. When more match, the response carries ' +
        '`Link: <...>; rel="next"`; follow it for the next page. The body is always a bare array.',
      responses: {
        200: Pets,
        304: c.noBody(),
        400: ErrorBody,
        403: ErrorBody,
      },
      metadata: {
        responses: {
          200: 'A page of animals.',
          304: 'Not modified: the `If-None-Match` tag is current.',
          400: 'Invalid query parameter (`invalid_request`).',
          403: scopeMissing('pets:read'),
          ...common,
        },
        headers: { 200: 'nextPage' },
        scope: 'pets:read',
      } satisfies RouteDocs,
    },
    createPet: {
      method: 'POST',
      path: '/pets',
      body: NewPet,
      headers: CreatePetHeaders,
      summary: 'Add an animal',
      description:
        'Creates an animal. Unknown fields, a client-sent `id` included, are ignored. With an `Idempotency-Key` ' +
        '(recommended: a random UUID per animal, the same on every retry) the request is safe to retry: a repeat with ' +
        'the same key and body gets the first answer again, byte for byte, with `Idempotent-Replayed: true`, and no ' +
        'second animal. Keys are scoped to the API key and kept at least 24 hours.',
      responses: {
        201: Pet,
        400: ErrorBody,
        403: ErrorBody,
        409: ErrorBody,
        413: ErrorBody,
        415: ErrorBody,
        422: ErrorBody,
      },
      metadata: {
        scope: 'pets:write',
        requestBody: 'The animal to add.',
        responses: {
          201: 'The animal was added (or, with `Idempotent-Replayed: true`, the stored answer of the first request with this `Idempotency-Key`); the body carries the assigned `id`.',
          400: 'Missing required fields, invalid values, malformed JSON or a malformed `Idempotency-Key` (`invalid_request`).',
          403: scopeMissing('pets:write'),
          409: 'A request with this `Idempotency-Key` is still being processed (`idempotency_key_in_use`). See Retry-After.',
          413: 'Body larger than 64 KiB (`payload_too_large`).',
          415: 'Body is not `application/json` (`unsupported_media_type`).',
          422: 'This `Idempotency-Key` was already used with a different body (`idempotency_key_reused`).',
          ...common,
        },
        headers: { 201: 'created', 409: 'retryAfter' },
      } satisfies RouteDocs,
    },
    getPet: {
      method: 'GET',
      path: '/pets/:petId',
      pathParams: PetIdParams,
      deprecated: true,
      summary: 'Get an animal (deprecated)',
      description:
        'Deprecated: announced for removal on 5 December 2030. Use `GET /pets` with a `status` filter instead. ' +
        'Every response carries `Deprecation`, `Sunset` and `Link: rel="successor-version"`. From the Sunset instant ' +
        'it answers 410 `gone`.',
      responses: {
        200: Pet,
        304: c.noBody(),
        400: ErrorBody,
        403: ErrorBody,
        404: ErrorBody,
        410: ErrorBody,
      },
      metadata: {
        scope: 'pets:read',
        responses: {
          200: 'The animal.',
          304: 'Not modified: the `If-None-Match` tag is current.',
          400: 'Malformed `petId` (`invalid_request`).',
          403: scopeMissing('pets:read'),
          404: 'No animal with this id (`not_found`).',
          410: 'After the Sunset instant (5 December 2030): the operation is retired (`gone`); the successor is in `Link`.',
          ...common,
        },
      } satisfies RouteDocs,
    },
    getRateLimit: {
      method: 'GET',
      path: '/rate_limit',
      summary: 'Rate-limit status of the caller',
      description:
        "The caller's plan and both windows now (`reset` in Unix seconds). Not charged to the limits, as GitHub's " +
        '`/rate_limit`, and answered even while over a limit; it still needs a valid key (any scope).',
      responses: {
        200: RateLimitStatus,
      },
      metadata: {
        responses: {
          200: 'The status.',
          ...common,
        },
      } satisfies RouteDocs,
    },
  },
  {
    pathPrefix: API_PREFIX,
    strictStatusCodes: true,
    commonResponses,
  },
);

export type AnimalStoreContract = typeof contract;
