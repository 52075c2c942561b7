import { GET_PET_DEPRECATION, contract } from '@animal-store/contract';
import type { AppRoute } from '@ts-rest/core';

/** What the client says when a deprecated operation is first used. */
export interface DeprecationNotice {
  /** The contract's operation name, e.g. `getPet`. */
  operation: string;
  method: string;
  /** The contract path, e.g. `/v1/pets/:petId`. */
  path: string;
  /** When the operation is announced to be removed, if announced. */
  sunset: Date | undefined;
  /** What to use instead. */
  successor: string;
  /** A sentence for people: names the operation, the sunset date and the replacement. */
  message: string;
}

type Operation = keyof typeof contract;

/** Sunset and successor of each deprecated operation; the contract says which ones are deprecated. */
const DEPRECATIONS: Partial<Record<Operation, { sunset: Date; successor: string }>> = {
  getPet: {
    sunset: GET_PET_DEPRECATION.sunsetAt,
    successor: `GET ${GET_PET_DEPRECATION.successorPath} with a status filter (listPets / paginatePets)`,
  },
};

/** Shared by every copy of this module in the process (ESM and CJS builds alike): each operation warns once. */
const WARNED_KEY = Symbol.for('@animal-store/client.deprecations-warned');
function warned(): Set<string> {
  const store = globalThis as { [WARNED_KEY]?: Set<string> };
  return (store[WARNED_KEY] ??= new Set());
}

export function deprecationNotice(operation: Operation): DeprecationNotice | undefined {
  const route: AppRoute = contract[operation];
  if (!route.deprecated) return undefined;
  const known = DEPRECATIONS[operation];
  const sunset = known?.sunset;
  const successor = known?.successor ?? 'see the API documentation';
  const when = sunset ? ` and will be removed on ${sunset.toISOString().slice(0, 10)}` : '';
  return {
    operation,
    method: route.method,
    path: route.path,
    sunset,
    successor,
    message: `@animal-store/client: ${operation} (${route.method} ${route.path}) is deprecated${when}; use ${successor} instead.`,
  };
}

/** Warns about a deprecated operation the first time it is used in this process. */
export function warnIfDeprecated(operation: Operation, onDeprecation?: (notice: DeprecationNotice) => void): void {
  const notice = deprecationNotice(operation);
  if (!notice || warned().has(operation)) return;
  warned().add(operation);
  if (onDeprecation) onDeprecation(notice);
  else console.warn(notice.message);
}
