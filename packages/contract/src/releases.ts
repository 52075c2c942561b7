/** Replaced at build (tsup.config.ts) and in tests (vitest.config.ts). */
declare const __ANIMAL_STORE_RELEASES__: readonly string[];

/**
 * This package's version and every earlier release of it, from its CHANGELOG.md. The client always carries the same
 * version (the two are released together), so this is also the list of client versions the service knows: it counts
 * calls of deprecated operations by these, and `other` for anything else (a bounded set of metric labels).
 */
export const RELEASES: readonly string[] = __ANIMAL_STORE_RELEASES__;

/** The product token of @animal-store/client's `User-Agent`: `animal-store-client/<version> node/<version>`. */
export const CLIENT_PRODUCT = 'animal-store-client';
const CLIENT_TOKEN = new RegExp(`(?:^|\\s)${CLIENT_PRODUCT}/(\\S+)`);

/** The client version a `User-Agent` names (`animal-store-client/<version> ...`) if it is a release, else `other`. */
export function clientVersionOf(userAgent: string | undefined): string {
  const version = userAgent === undefined ? undefined : CLIENT_TOKEN.exec(userAgent)?.[1];
  return version !== undefined && RELEASES.includes(version) ? version : 'other';
}
