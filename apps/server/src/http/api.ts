import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { contract } from '@animal-store/contract';
import type { RateLimitStore } from '@animal-store/rate-limit';
import { createExpressEndpoints } from '@ts-rest/express';
import type { Express, RequestHandler } from 'express';
import type { Registry, RegistryContentType } from 'prom-client';
import type { PetStore } from '../db/types.js';
import type { LastUsedRecorder } from '../keys/last-used.js';
import type { KeyResolver } from '../keys/resolver.js';
import type { ApiRateLimiting } from '../rate-limiting/api-limits.js';
import { requireApiKey, requireScope, resolveApiKey } from './auth.js';
import { jsonBody } from './body.js';
import { noteDeprecatedCalls } from './deprecated-calls.js';
import { allowedMethods, methodNotAllowed } from './error-handler.js';
import { deprecationHeaders, petsRouter } from './pets.js';
import { validationError } from './validation.js';

/** The OpenAPI document the contract package generated at its build (served as is, not generated again here). */
const OPENAPI_JSON = readFileSync(
  createRequire(import.meta.url).resolve('@animal-store/contract/openapi.json'),
  'utf8',
);

export interface ApiOptions {
  pets: PetStore;
  keys: KeyResolver;
  /** Load shedding's second gate, for keys the first could not tell without a lookup (overload/admission.ts). */
  afterKeyLookup?: RequestHandler | undefined;
  lastUsed: Pick<LastUsedRecorder, 'record'>;
  limiting: ApiRateLimiting;
  /** Requests in flight per key lineage, after the rate limiter (rate-limiting/concurrency.ts); none when absent. */
  concurrency?: RequestHandler | undefined;
  /** The limiter's store, read by `GET /v1/rate_limit`. */
  limits: RateLimitStore;
  /** Where the count of deprecated calls is registered (the app's metrics). */
  registry: Registry<RegistryContentType>;
  /** The app's clock: getPet's Sunset. */
  now: () => number;
  /** Told how each bearer key was resolved (the key-lookup metric). */
  onKeyLookup?: (result: 'hit' | 'miss' | 'malformed') => void;
}

/**
 * Mounts `/v1`. Order matters: the limiter needs the identity (API key or client address) and answers before
 * authentication, so every answer, 401 included, carries `X-RateLimit-*`; a key's slot of its concurrent requests is
 * taken once the rate limiter let it through (so its 429 carries the headers too); an address already refused is answered
 * before its key is looked up; a missing key is a 401 before any input is validated; a body is read only for a
 * matched route of a key with the route's scope.
 */
export function mountApi(app: Express, options: ApiOptions): void {
  // /v1's steps are mounted on the app under /v1, not on a Router of their own: an Express 4 Router leaves its stack
  // through setImmediate, which would move every /v1 request's work out of the loop turn that read it, past every
  // other request of that turn, and out of sight of the load shedder's turn budget (overload/turn.ts).
  const v1 = (path = '') => `/v1${path}`;
  // Answers depend on the key: only the client may keep them, and must revalidate (ETag) before reuse.
  app.use(v1(), (_req, res, next) => {
    res.setHeader('Cache-Control', 'private, no-cache');
    next();
  });
  // getPet's deprecation headers go on before anything can answer (401 and 429 included).
  app.use(v1('/pets/:petId'), deprecationHeaders);
  app.use(v1(), resolveApiKey(options.keys, options.limiting.refuseKnownAddress, options.onKeyLookup));
  if (options.afterKeyLookup) app.use(v1(), options.afterKeyLookup);
  app.use(v1(), options.limiting.middleware);
  if (options.concurrency) app.use(v1(), options.concurrency);
  app.get(v1('/openapi.json'), (_req, res) => {
    res.type('application/json').send(OPENAPI_JSON);
  });
  app.use(v1(), requireApiKey());

  createExpressEndpoints(contract, petsRouter(options.pets, options.limits, { now: options.now }), app, {
    logInitialization: false,
    // Deprecated calls are noted first (a call refused for its scope or input still counts), then the key's scope, then
    // the body.
    globalMiddleware: [
      noteDeprecatedCalls(options.registry, options.lastUsed),
      requireScope(options.lastUsed),
      jsonBody(),
    ],
    requestValidationErrorHandler: (err, _req, _res, next) => next(validationError(err)),
  });
  for (const [path, methods] of allowedMethods(contract)) app.all(path, methodNotAllowed(methods));
}
