import { adminContract, ENVIRONMENTS, type EnvironmentName, serviceOrigin } from '@animal-store/contract';
import { type ApiFetcher, type InitClientReturn, initClient } from '@ts-rest/core';
import { type RetryOptions, retryPolicy } from './retry.js';
import { createTransport, fetcherOf } from './transport.js';
import { defaultUserAgent } from './version.js';

export interface AnimalStoreAdminClientOptions {
  /** The service's URL (`http://127.0.0.1:3000`; a trailing `/v1` is ignored). Wins over `environment`. */
  baseUrl?: string;
  /** A preset from the contract's `ENVIRONMENTS`. Default `production`. */
  environment?: EnvironmentName;
  /** The service's `ADMIN_TOKEN`, sent as `Authorization: Bearer <token>`. Never logged. */
  adminToken: string;
  /** Retry and backoff settings, as the API client's (only what certainly did not act is retried). */
  retry?: RetryOptions;
  /** A `fetch` implementation. Default: the global one. */
  fetch?: typeof globalThis.fetch;
}

/**
 * The admin contract's client: `createKey`, `listKeys`, `getKey`, `updateKey`, `revokeKey`, `rotateKey`,
 * `getKeyUsage`, `liftKeyBan`, each returning the contract's typed `{ status, body, headers }` union.
 */
export type AnimalStoreAdminClient = InitClientReturn<typeof adminContract, { baseUrl: string; api: ApiFetcher }>;

/** A client of the admin API (`/admin/v1`), which manages API keys. */
export function createAnimalStoreAdminClient(options: AnimalStoreAdminClientOptions): AnimalStoreAdminClient {
  if (typeof options.adminToken !== 'string' || options.adminToken.trim() === '')
    throw new TypeError('adminToken is required');
  const baseUrl = options.baseUrl ?? ENVIRONMENTS[options.environment ?? 'production'];
  if (!baseUrl) throw new TypeError(`unknown environment ${JSON.stringify(options.environment)}`);
  const parsed = new URL(baseUrl);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new TypeError('baseUrl must be an http(s) URL');
  const transport = createTransport({
    apiKey: options.adminToken,
    userAgent: defaultUserAgent(),
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    retry: retryPolicy(options.retry),
    cache: undefined,
    onRateLimit: () => undefined,
  });
  const api = fetcherOf(transport);
  return initClient(adminContract, { baseUrl: serviceOrigin(baseUrl), api });
}
