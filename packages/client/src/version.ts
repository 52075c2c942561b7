import { CLIENT_PRODUCT } from '@animal-store/contract';

/** Replaced at build (tsup.config.ts) and in tests (vitest.config.ts) by package.json's `version`. */
declare const __ANIMAL_STORE_CLIENT_VERSION__: string;

/** This package's version, e.g. `1.2.0`. */
export const VERSION: string = __ANIMAL_STORE_CLIENT_VERSION__;

/**
 * The `User-Agent` the client sends unless the caller sets one: `animal-store-client/<version> node/<version>`; the
 * service counts calls of deprecated operations by the first part.
 */
export function defaultUserAgent(): string {
  const node = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
  return `${CLIENT_PRODUCT}/${VERSION}${node ? ` node/${node}` : ''}`;
}
