import {
  ENVIRONMENTS,
  type EnvironmentName,
  type ListPetsQuery,
  type Pet,
  type PetStatus,
  contract,
  serviceOrigin,
} from '@animal-store/contract';
import { type ApiFetcher, type AppRoute, type InitClientReturn, getCompleteUrl, initClient } from '@ts-rest/core';
import { type DeprecationNotice, deprecationNotice, warnIfDeprecated } from './deprecation.js';
import { AnimalStoreError, AnimalStoreGoneError, AnimalStoreResponseError, errorCode } from './errors.js';
import { findLink } from './link.js';
import { type RetryOptions, retryPolicy } from './retry.js';
import { type CacheOptions, type RateLimitInfo, type Transport, createTransport, fetcherOf } from './transport.js';
import { defaultUserAgent } from './version.js';

export interface AnimalStoreClientOptions {
  /** The service's base URL, ending in `/v1` (e.g. `http://127.0.0.1:3000/v1`). Wins over `environment`. */
  baseUrl?: string;
  /** A preset from the contract's `ENVIRONMENTS`. Default `production`. */
  environment?: EnvironmentName;
  /** The API key, sent as `Authorization: Bearer <key>` on every request. Never logged. */
  apiKey: string;
  /** Retry and backoff settings (see the README). */
  retry?: RetryOptions;
  /** A `fetch` implementation. Default: the global one. */
  fetch?: typeof globalThis.fetch;
  /** Told, once per process and operation, when a deprecated operation is used. Default: `console.warn`. */
  onDeprecation?: (notice: DeprecationNotice) => void;
  /**
   * Conditional requests for GETs: remembers the ETag and body per URL, sends `If-None-Match`, and answers a 304 with
   * the remembered body as a 200. Off by default.
   */
  cache?: boolean | CacheOptions;
}

/** The ts-rest client of the contract: each operation returns the contract's typed `{ status, body, headers }` union. */
type ContractClient = InitClientReturn<typeof contract, { baseUrl: string; api: ApiFetcher }>;

export interface PaginateOptions {
  status?: PetStatus;
  /** Pets per page (the `limit` query parameter, 1-100). Default: the service's (20). */
  pageSize?: number;
  /** Cancels the iteration, the request in flight and any retry wait. */
  signal?: AbortSignal;
}

export interface AnimalStoreClient {
  /**
   * GET /v1/pets: one page of pets. The next page, if any, is in the `Link: <...>; rel="next"` header;
   * `paginatePets` follows it for you. Pass `fetchOptions: { signal }` to cancel.
   */
  listPets: ContractClient['listPets'];
  /**
   * POST /v1/pets: adds a pet (201 with the pet and a `Location`). Sent with an `Idempotency-Key` (a random UUID per
   * call unless `headers['idempotency-key']` gives one), the same on every retry, so it is retried like a GET (502,
   * 504, connection errors) and after 409 `idempotency_key_in_use`; the service never creates twice. See the README.
   */
  createPet: ContractClient['createPet'];
  /**
   * GET /v1/pets/:petId: one pet.
   * @deprecated Announced for removal on 5 December 2030. Use `listPets` / `paginatePets` with a `status` filter.
   */
  getPet: ContractClient['getPet'];
  /**
   * GET /v1/rate_limit: the key's plan and both windows now (`limit`, `remaining`, `reset` in Unix seconds). Not
   * charged to the limits, and answered even while over them.
   */
  getRateLimit: ContractClient['getRateLimit'];
  /** Every pet matching the filter, page after page, following `Link: rel="next"`. Throws on a non-200 page. */
  paginatePets(options?: PaginateOptions): AsyncIterableIterator<Pet>;
  /** The last `X-RateLimit-*` figures seen on any response, or undefined before the first one. */
  readonly rateLimit: RateLimitInfo | undefined;
  /** The base URL in use (ending in `/v1`). */
  readonly baseUrl: string;
}

type Operation = keyof typeof contract;
const OPERATION_OF = new Map<AppRoute, Operation>(
  Object.entries(contract).map(([name, route]) => [route, name as Operation]),
);

export function createAnimalStoreClient(options: AnimalStoreClientOptions): AnimalStoreClient {
  if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') throw new TypeError('apiKey is required');
  const baseUrl = options.baseUrl ?? ENVIRONMENTS[options.environment ?? 'production'];
  if (!baseUrl) throw new TypeError(`unknown environment ${JSON.stringify(options.environment)}`);
  const parsedBase = new URL(baseUrl);
  if (parsedBase.protocol !== 'http:' && parsedBase.protocol !== 'https:')
    throw new TypeError('baseUrl must be an http(s) URL');
  /** The contract's paths carry `/v1`, so requests go to the base URL without it. */
  const origin = serviceOrigin(baseUrl);

  let rateLimit: RateLimitInfo | undefined;
  const transport: Transport = createTransport({
    apiKey: options.apiKey,
    userAgent: defaultUserAgent(),
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    retry: retryPolicy(options.retry),
    cache: options.cache === true ? {} : options.cache || undefined,
    onRateLimit: (info) => {
      rateLimit = info;
    },
  });
  const routes = initClient(contract, { baseUrl: origin, api: contractFetcher(transport, options.onDeprecation) });

  return {
    listPets: routes.listPets,
    createPet: routes.createPet,
    getPet: routes.getPet,
    getRateLimit: routes.getRateLimit,
    paginatePets: (paging) => paginatePets(transport, origin, parsedBase.origin, paging),
    get rateLimit() {
      return rateLimit;
    },
    baseUrl,
  };
}

/**
 * ts-rest's fetcher on the transport: a deprecated operation is announced (once) before it is sent; a retired one
 * (410 `gone`) throws, naming its successor, rather than returning a result.
 */
function contractFetcher(transport: Transport, onDeprecation: AnimalStoreClientOptions['onDeprecation']): ApiFetcher {
  const fetcher = fetcherOf(transport, (route) => {
    const operation = OPERATION_OF.get(route);
    if (operation) warnIfDeprecated(operation, onDeprecation);
  });
  return async (args) => {
    const result = await fetcher(args);
    if (result.status === 410 && errorCode(result.body) === 'gone') {
      const operation = OPERATION_OF.get(args.route);
      const successor = (operation && deprecationNotice(operation)?.successor) ?? 'what the API documentation names';
      throw new AnimalStoreGoneError(args.method, args.path, result.body, operation ?? args.route.path, successor);
    }
    return result;
  };
}

/** Every pet matching the filter, page after page, following `Link: rel="next"` within `allowedOrigin`. */
async function* paginatePets(
  transport: Transport,
  origin: string,
  allowedOrigin: string,
  paging: PaginateOptions = {},
): AsyncIterableIterator<Pet> {
  const query: ListPetsQuery = {};
  if (paging.status !== undefined) query.status = paging.status;
  if (paging.pageSize !== undefined) query.limit = paging.pageSize;
  let url: string | undefined = getCompleteUrl(query, origin, undefined, contract.listPets, false);
  const seen = new Set<string>();
  while (url) {
    if (seen.has(url)) throw new AnimalStoreError(`pagination loops: ${url} was already fetched`);
    seen.add(url);
    const page = await transport({
      method: contract.listPets.method,
      url,
      template: contract.listPets.path,
      signal: paging.signal,
    });
    if (page.status !== 200 || !Array.isArray(page.body)) {
      throw new AnimalStoreResponseError(contract.listPets.method, url, page.status, page.body);
    }
    yield* page.body as Pet[];
    url = nextPage(url, page.headers.get('link'), allowedOrigin);
  }
}

/** The `rel="next"` target, resolved against the page's URL; refuses to send the key to another origin. */
function nextPage(current: string, link: string | null, allowedOrigin: string): string | undefined {
  const target = findLink(link, 'next');
  if (target === undefined) return undefined;
  const next = new URL(target, current);
  if (next.origin !== allowedOrigin) {
    throw new AnimalStoreError(`refusing to follow rel="next" to another origin (${next.origin})`);
  }
  return next.href;
}
