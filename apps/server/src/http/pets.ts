import { contract, GET_PET_DEPRECATION, IDEMPOTENCY_HEADERS, PAGE_LIMIT, type Pet } from '@animal-store/contract';
import { initServer } from '@ts-rest/express';
import type { RequestHandler } from 'express';
import type { RateLimitStore } from '@animal-store/rate-limit';
import type { PetStore } from '../db/types.js';
import { HttpError } from './errors.js';
import { decodeCursor, encodeCursor, nextLink } from './paging.js';
import { serializedAs } from '../serialized.js';
import { petsOf } from '../db/pet-page.js';
import { fingerprintOf, idempotencyKeyOf, keyInUse, keyReused, KeysInFlight } from './idempotency.js';
import { rateLimitStatus } from './rate-limit-status.js';

const s = initServer();

/**
 * The contract's operations: pets on a PetStore, the rate-limit status on the limiter's store. Inputs arrive validated.
 * A list page is answered with the JSON the store made (see db/pet-page.ts); with `validateResponses` (tests) it is
 * parsed into values first, for ts-rest to check against the contract.
 */
export function petsRouter(pets: PetStore, limits: RateLimitStore, options: { validateResponses?: boolean } = {}) {
  const keysInFlight = new KeysInFlight();
  return s.router(contract, {
    getRateLimit: rateLimitStatus(limits),
    listPets: async ({ query, req, res }) => {
      const limit = query.limit ?? PAGE_LIMIT.default;
      const afterId = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const page = await pets.list({ limit, status: query.status, afterId });
      if (page.more && page.lastId !== undefined) {
        res.setHeader(
          'Link',
          nextLink(req.baseUrl + req.path, { limit, status: query.status, cursor: encodeCursor(page.lastId) }),
        );
      }
      // The page itself is the body: its JSON answer is page.json (see serialized.ts).
      return { status: 200, body: options.validateResponses ? petsOf(page) : (page as unknown as Pet[]) };
    },
    createPet: async ({ body, req, res }) => {
      const locationPrefix = `${req.baseUrl}${req.path.replace(/\/+$/, '')}/`;
      const key = idempotencyKeyOf(req);
      if (key === undefined || !req.apiKey) {
        const pet = await pets.create(body);
        res.setHeader('Location', `${locationPrefix}${pet.id}`);
        return { status: 201, body: pet };
      }
      const scope = { apiKeyId: req.apiKey.id, key, fingerprint: fingerprintOf(body), locationPrefix };
      const outcome = await keysInFlight.run(scope, () => pets.createOnce(body, scope));
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
      const pet = await pets.get(params.petId);
      // Thrown, not returned: errors go through the one error handler (Error body, no ETag).
      if (!pet) throw new HttpError('not_found', `Pet ${params.petId} not found`);
      return { status: 200, body: pet };
    },
  });
}

/** Every answer of the deprecated getPet, errors included, carries Deprecation, Sunset and the successor link. */
export const deprecationHeaders: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') {
    res.setHeader('Deprecation', GET_PET_DEPRECATION.deprecationHeader);
    res.setHeader('Sunset', GET_PET_DEPRECATION.sunsetHeader);
    res.setHeader('Link', GET_PET_DEPRECATION.linkHeader);
  }
  next();
};
