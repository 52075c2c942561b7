import {
  contract,
  encodeCursor,
  GET_PET_DEPRECATION,
  IDEMPOTENCY_HEADERS,
  MAX_SAFE_ID,
  PAGE_LIMIT,
  type Pet,
} from '@animal-store/contract';
import { initServer } from '@ts-rest/express';
import type { RequestHandler } from 'express';
import type { RateLimitStore } from '@animal-store/rate-limit';
import type { PetStore } from '../db/types.js';
import { AppError } from '../errors/app-error.js';
import { afterIdOf, nextLink } from './paging.js';
import { asBody, serializedAs } from '../fast-path/serialized-body.js';
import { fingerprintOf, idempotencyKeyOf, keyInUse, keyReused, KeysInFlight } from './idempotency.js';
import { rateLimitStatus } from './rate-limit-status.js';
import { lineageOf } from '../keys/identity.js';
import { inSpan } from '../telemetry/spans.js';

const s = initServer();

/** Where answers point: the contract's own paths, never the request's spelling of them. */
const PETS_PATH = contract.listPets.path;
const PET_LOCATION_PREFIX = `${contract.createPet.path}/`;

/**
 * The contract's operations: pets on a PetStore, the rate-limit status on the limiter's store. Inputs arrive validated.
 * A list page is answered with the JSON the store made (see db/pets/page.ts).
 */
export function petsRouter(pets: PetStore, limits: RateLimitStore, options: { now?: () => number } = {}) {
  const keysInFlight = new KeysInFlight();
  const now = options.now ?? Date.now;
  return s.router(contract, {
    getRateLimit: rateLimitStatus(limits),
    listPets: async ({ query, res }) => {
      const limit = query.limit ?? PAGE_LIMIT.default;
      const page = await pets.list({ limit, status: query.status, afterId: afterIdOf(query.cursor, MAX_SAFE_ID) });
      if (page.more && page.lastId !== undefined) {
        res.setHeader('Link', nextLink(PETS_PATH, { limit, status: query.status, cursor: encodeCursor(page.lastId) }));
      }
      // The page itself is the body: its JSON answer is page.json (see fast-path/serialized-body.ts).
      return { status: 200, body: asBody(page) };
    },
    createPet: async ({ body, req, res }) => {
      const key = idempotencyKeyOf(req);
      if (key === undefined || !req.apiKey) {
        const pet = await pets.create(body);
        res.setHeader('Location', `${PET_LOCATION_PREFIX}${pet.id}`);
        return { status: 201, body: pet };
      }
      const scope = {
        // A lineage is one key: a retry sent with the rotated key is the same request.
        lineageId: lineageOf(req.apiKey),
        key,
        fingerprint: fingerprintOf(body),
        locationPrefix: PET_LOCATION_PREFIX,
      };
      // The check is the commit itself (the key's record goes in with the pet, or its stored answer comes back).
      const outcome = await inSpan('idempotency check', {}, (span) =>
        keysInFlight
          .run(scope, () => pets.createOnce(body, scope))
          .then((result) => {
            span?.setAttribute('animal_store.idempotency.outcome', result.kind === 'stored' ? 'replayed' : result.kind);
            return result;
          }),
      );
      if (outcome.kind === 'in_use') throw keyInUse();
      if (outcome.kind === 'stored') {
        if (outcome.fingerprint !== scope.fingerprint) throw keyReused();
        res.setHeader(IDEMPOTENCY_HEADERS.replayed, 'true');
      }
      // The first answer and every replay send the stored bytes themselves.
      const { answer } = outcome;
      res.setHeader('Location', answer.location);
      // (a replay parses its stored body only for its value: the bytes sent are the stored ones)
      const pet = outcome.kind === 'created' ? { ...outcome.pet } : (JSON.parse(answer.body) as Pet);
      return { status: 201 as const, body: serializedAs(pet, answer.body) };
    },
    getPet: async ({ params }) => {
      // Retired at its Sunset: 410 with the successor Link (deprecationHeaders) rather than the pet.
      if (now() >= GET_PET_DEPRECATION.sunsetAt.getTime()) throw new AppError('gone', GONE_MESSAGE);
      const pet = await pets.get(params.petId);
      // Thrown, not returned: errors go through the one error handler (Error body, no ETag).
      if (!pet) throw new AppError('not_found', `Pet ${params.petId} not found`);
      return { status: 200, body: pet };
    },
  });
}

const GONE_MESSAGE =
  `GET /v1/pets/{petId} was retired at its Sunset (${GET_PET_DEPRECATION.sunsetAt.toISOString()}): use ` +
  `GET ${GET_PET_DEPRECATION.successorPath} with a status filter`;

/** Every answer of the deprecated getPet, errors included, carries Deprecation, Sunset and the successor link. */
export const deprecationHeaders: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') {
    res.setHeader('Deprecation', GET_PET_DEPRECATION.deprecationHeader);
    res.setHeader('Sunset', GET_PET_DEPRECATION.sunsetHeader);
    res.setHeader('Link', GET_PET_DEPRECATION.linkHeader);
  }
  next();
};
