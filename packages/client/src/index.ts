export { createAnimalStoreClient } from './client.js';
export type { AnimalStoreClient, AnimalStoreClientOptions, PaginateOptions } from './client.js';
export type { DeprecationNotice } from './deprecation.js';
export { AnimalStoreError, AnimalStoreNetworkError, AnimalStoreResponseError } from './errors.js';
export { findLink, parseLinkHeader } from './link.js';
export type { WebLink } from './link.js';
export { parseRetryAfter } from './retry.js';
export type { RetryEvent, RetryOptions, RetryReason } from './retry.js';
export type { CacheOptions, RateLimitInfo } from './transport.js';
export {
  ENVIRONMENTS,
  ERROR_CODES,
  ERROR_STATUS,
  ErrorBody,
  NewPet,
  Pet,
  PetStatus,
  Pets,
  contract,
} from '@animal-store/contract';
export type { EnvironmentName, ErrorCode, ListPetsQuery } from '@animal-store/contract';
