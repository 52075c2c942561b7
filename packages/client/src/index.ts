export { createAnimalStoreClient } from './client.js';
export type { AnimalStoreClient, AnimalStoreClientOptions, PaginateOptions } from './client.js';
export type { DeprecationNotice } from './deprecation.js';
export { AnimalStoreError, AnimalStoreGoneError, AnimalStoreNetworkError, AnimalStoreResponseError } from './errors.js';
export { findLink, parseLinkHeader } from './link.js';
export type { WebLink } from './link.js';
export { createRetryBudget, parseRetryAfter } from './retry.js';
export type { RetryBudget, RetryBudgetOptions, RetryEvent, RetryOptions, RetryReason } from './retry.js';
export type { CacheOptions, RateLimitInfo } from './transport.js';
export { VERSION } from './version.js';
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
