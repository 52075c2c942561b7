import { clientVersionOf, contract } from '@animal-store/contract';
import type { AppRoute } from '@ts-rest/core';
import type { RequestHandler } from 'express';
import { Counter, type Registry, type RegistryContentType } from 'prom-client';
import type { LastUsedRecorder } from '../keys/last-used.js';

/** The contract's deprecated operations by route object (what ts-rest sets as `req.tsRestRoute`), with their names. */
const DEPRECATED = new Map<unknown, string>(
  Object.entries<AppRoute>(contract)
    .filter(([, route]) => route.deprecated === true)
    .map(([name, route]) => [route, name]),
);

/**
 * Who still calls a deprecated operation: each call counted by operation and client version
 * (`animal_store_deprecated_operation_calls_total`; the version from the client's User-Agent when it is a release, else
 * `other`, so the label set stays bounded), and the calling key's minute noted, written in batches with its last use.
 * Runs first among a route's handlers: a call refused later (scope, input, Sunset) still counts.
 */
export function noteDeprecatedCalls(
  registry: Registry<RegistryContentType>,
  lastUsed: Pick<LastUsedRecorder, 'record'>,
): RequestHandler {
  const calls = new Counter({
    name: 'animal_store_deprecated_operation_calls_total',
    help: 'Calls of deprecated operations with a valid key, by operation and client version (a release, else "other")',
    labelNames: ['operation', 'client_version'] as const,
    registers: [registry],
  });
  return (req, _res, next) => {
    const operation = DEPRECATED.get(req.tsRestRoute);
    if (operation !== undefined) {
      calls.inc({ operation, client_version: clientVersionOf(req.headers['user-agent']) });
      if (req.apiKey) lastUsed.record(req.apiKey.id, 'deprecatedCall');
    }
    next();
  };
}
