import { initContract } from '@ts-rest/core';
import {
  ApiKey,
  ApiKeyChanges,
  ApiKeyIdParams,
  ApiKeys,
  ApiKeyUsage,
  CreatedApiKey,
  ListApiKeysQuery,
  NewApiKey,
  RotateApiKey,
} from './admin-schemas.js';
import { ErrorBody } from './errors.js';
import type { RouteDocs } from './contract.js';

const c = initContract();

/** Prefix of every admin operation. */
export const ADMIN_PREFIX = '/admin/v1';

const commonResponses = {
  401: ErrorBody,
  404: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
};

const common = {
  401: 'Missing or wrong admin token (`unauthorized`).',
  404: 'No key with this id (`not_found`). Every admin route answers 404 when the service has no `ADMIN_TOKEN`.',
  429: 'Too many admin requests from this address (`rate_limit_exceeded`, `api_key_banned`). See Retry-After.',
  500: 'Unexpected failure (`internal_error`).',
  503: 'The service cannot decide right now (`service_unavailable`).',
};

/** The answers of every route that takes a key's id, beside its own. */
const byId = { 400: 'Malformed `id` (`invalid_request`).', ...common };

const body = {
  400: 'Invalid body, parameter or value (`invalid_request`); nothing was changed.',
  413: 'Body larger than 64 KiB (`payload_too_large`).',
  415: 'Body is not `application/json` (`unsupported_media_type`).',
};

/**
 * The admin API: API keys as a product (create, list, inspect, change, revoke, rotate, usage, lift a ban). Protected
 * by the service's `ADMIN_TOKEN`; limited per client address, never charged to a key's plan.
 */
export const adminContract = c.router(
  {
    createKey: {
      method: 'POST',
      path: '/keys',
      body: NewApiKey,
      summary: 'Create a key',
      description:
        'Creates a key. `scopes` default to both; `perMinute` and `perDay` are required for enterprise keys and refused ' +
        'for the other plans, as is `concurrentRequests` (optional for enterprise keys: the business plan’s when ' +
        'absent); `expiresAt` must be in the future. The raw key is in `secret`, shown this once.',
      responses: { 201: CreatedApiKey, 400: ErrorBody, 413: ErrorBody, 415: ErrorBody },
      metadata: {
        requestBody: 'The key to create.',
        responses: { 201: 'The key, and its raw secret (shown once).', ...body, ...common },
      } satisfies RouteDocs,
    },
    listKeys: {
      method: 'GET',
      path: '/keys',
      query: ListApiKeysQuery,
      summary: 'List keys',
      description: 'Keys ordered by id, paged as pets are (`limit`, `Link: <...>; rel="next"`). Never secrets.',
      responses: { 200: ApiKeys, 400: ErrorBody },
      metadata: {
        responses: { 200: 'A page of keys.', 400: 'Invalid query parameter (`invalid_request`).', ...common },
        headers: { 200: 'nextPage' },
      } satisfies RouteDocs,
    },
    getKey: {
      method: 'GET',
      path: '/keys/:id',
      pathParams: ApiKeyIdParams,
      summary: 'Get a key',
      responses: { 200: ApiKey, 400: ErrorBody },
      metadata: {
        responses: { 200: 'The key.', ...byId },
      } satisfies RouteDocs,
    },
    updateKey: {
      method: 'PATCH',
      path: '/keys/:id',
      pathParams: ApiKeyIdParams,
      body: ApiKeyChanges,
      summary: 'Change a key',
      description:
        'Changes the name, scopes, limits (enterprise keys only) or expiry (`null` removes it). Every replica applies ' +
        'the change within a second.',
      responses: { 200: ApiKey, 400: ErrorBody, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody },
      metadata: {
        requestBody: 'The fields to change.',
        responses: { 200: 'The changed key.', ...body, 409: 'The key is revoked (`conflict`).', ...common },
      } satisfies RouteDocs,
    },
    revokeKey: {
      method: 'POST',
      path: '/keys/:id/revoke',
      pathParams: ApiKeyIdParams,
      body: c.noBody(),
      summary: 'Revoke a key',
      description:
        'Revokes the key at once; every replica refuses it within a second. Revoking twice keeps the first time.',
      responses: { 200: ApiKey, 400: ErrorBody },
      metadata: {
        responses: { 200: 'The revoked key.', ...byId },
      } satisfies RouteDocs,
    },
    rotateKey: {
      method: 'POST',
      path: '/keys/:id/rotate',
      pathParams: ApiKeyIdParams,
      body: RotateApiKey,
      summary: 'Rotate a key',
      description:
        'Issues a new raw key with the same name, plan, limits, scopes and expiry. The old key expires after ' +
        '`overlapSeconds` (default 86400; 0 ends it now), so clients switch without downtime. Old and new keys share ' +
        'their counters and bans: a rotation resets no quota and lifts no ban.',
      responses: { 201: CreatedApiKey, 400: ErrorBody, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody },
      metadata: {
        requestBody: 'Rotation options; `{}` takes the default overlap.',
        responses: {
          201: 'The new key and its raw secret (shown once).',
          ...body,
          409: 'The key is revoked or expired (`conflict`).',
          ...common,
        },
      } satisfies RouteDocs,
    },
    getKeyUsage: {
      method: 'GET',
      path: '/keys/:id/usage',
      pathParams: ApiKeyIdParams,
      summary: 'Usage of a key now',
      description: 'Both windows now (limit, used, remaining, reset) and the ban, if any. Reading it charges nothing.',
      responses: { 200: ApiKeyUsage, 400: ErrorBody },
      metadata: {
        responses: { 200: 'The usage.', ...byId },
      } satisfies RouteDocs,
    },
    liftKeyBan: {
      method: 'DELETE',
      path: '/keys/:id/ban',
      pathParams: ApiKeyIdParams,
      summary: 'Lift a ban',
      description: "Clears the key's counters and ban (shared with its rotation lineage).",
      responses: { 204: c.noBody(), 400: ErrorBody },
      metadata: {
        responses: { 204: 'Lifted (also when there was no ban).', ...byId },
      } satisfies RouteDocs,
    },
  },
  {
    pathPrefix: ADMIN_PREFIX,
    strictStatusCodes: true,
    commonResponses,
  },
);

export type AnimalStoreAdminContract = typeof adminContract;
