import { createHash, timingSafeEqual } from 'node:crypto';
import type { RouteDocs, Scope } from '@animal-store/contract';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { LastUsedRecorder } from '../keys/last-used.js';
import { connectionKeyHash } from '../keys/connection-key.js';
import { KEY_LOOKUP_NEEDED, type KeyResolution, type KeyResolver } from '../keys/resolver.js';
import { inLeafSpan, inSpan } from '../telemetry/spans.js';
import { AppError } from '../errors/app-error.js';

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;
export const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer realm="animal-store"' };
/** RFC 6750 §3.1: an expired token is an `invalid_token`; the description says it expired and nothing else. */
const EXPIRED = {
  'WWW-Authenticate': 'Bearer realm="animal-store", error="invalid_token", error_description="The API key expired"',
};

function settle(req: Parameters<RequestHandler>[0], resolution: KeyResolution): void {
  req.apiKey = resolution === 'expired' || resolution === undefined ? null : resolution;
  req.apiKeyExpired = resolution === 'expired';
}

/** True when the request carries the Authorization header more than once (Node keeps only the first in `headers`). */
function repeatedAuthorization(raw: string[]): boolean {
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization' && ++seen > 1) return true;
  return false;
}

/** The Authorization header was sent more than once: which one counts is ambiguous, so none does (400). */
export const REPEATED_AUTHORIZATION: unique symbol = Symbol('repeated Authorization');

/** The request's bearer token: undefined without one (or another scheme), REPEATED_AUTHORIZATION when sent twice. */
export function bearerToken(
  req: Pick<Request, 'headers' | 'rawHeaders'>,
): string | undefined | typeof REPEATED_AUTHORIZATION {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  if (repeatedAuthorization(req.rawHeaders)) return REPEATED_AUTHORIZATION;
  return BEARER.exec(header)?.[1];
}

/**
 * Resolves the bearer key (if any) onto `req.apiKey` without refusing anything: the rate limiter needs the identity
 * first. Refuses cheaply, before any key lookup: when the key is not cached and the client address is currently refused
 * (over its keyless limit, or banned), `refused` answers the 429 and no lookup is made.
 */
export function resolveApiKey(
  keys: KeyResolver,
  refused?: (req: Request, res: Response, next: NextFunction, lookup: () => void) => boolean,
  /** Told how each bearer key was resolved: from the cache, by a lookup, or refused as malformed (a metric). */
  onLookup?: (result: 'hit' | 'miss' | 'malformed') => void,
): RequestHandler {
  return (req, res, next) => {
    const raw = bearerToken(req);
    if (raw === REPEATED_AUTHORIZATION) {
      req.apiKey = null;
      req.apiKeyProblem = 'duplicate_authorization';
      next();
      return;
    }
    if (!raw) {
      req.apiKey = null;
      next();
      return;
    }
    const hash = connectionKeyHash(req, raw);
    const cached = keys.peek(hash);
    if (cached !== KEY_LOOKUP_NEEDED) {
      // Only a well-formed key has a hash, and its answer here came from a cached lookup.
      const hit = hash !== undefined;
      onLookup?.(hit ? 'hit' : 'malformed');
      inLeafSpan(
        KEY_LOOKUP_SPAN,
        () => ({ attributes: lookupAttributes(hit, cached) }),
        () => settle(req, cached),
      );
      next();
      return;
    }
    onLookup?.('miss');
    const lookup = () =>
      inSpan(
        KEY_LOOKUP_SPAN,
        () => ({ attributes: lookupAttributes(false, undefined) }),
        (span) =>
          keys.resolve(hash).then((resolution) => {
            span?.setAttributes(lookupAttributes(false, resolution));
            return resolution;
          }),
      ).then(
        (resolution) => {
          settle(req, resolution);
          next();
        },
        (err: unknown) => {
          // Decided after the limiter, so the 503 carries the address's rate-limit headers (read, never charged).
          req.apiKey = null;
          req.apiKeyProblem = { lookupFailed: err };
          next();
        },
      );
    if (refused?.(req, res, next, () => void lookup())) return;
    void lookup();
  };
}

const KEY_LOOKUP_SPAN = 'api_key lookup';

/** What a key lookup's span says: cache hit or not, and the key's id and plan (never the key itself). */
function lookupAttributes(cacheHit: boolean, resolution: KeyResolution) {
  return {
    'animal_store.api_key.cache_hit': cacheHit,
    ...(resolution && resolution !== 'expired'
      ? { 'animal_store.api_key.id': resolution.id, 'animal_store.api_key.plan': resolution.plan }
      : { 'animal_store.api_key.found': false }),
  };
}

/** 401 unless `resolveApiKey` found an active key, decided before any input validation. */
export function requireApiKey(): RequestHandler {
  return (req, _res, next) => {
    if (req.apiKey) {
      next();
      return;
    }
    if (req.apiKeyExpired) {
      next(new AppError('unauthorized', 'API key expired', EXPIRED));
      return;
    }
    const problem = req.apiKeyProblem;
    if (problem === 'duplicate_authorization') {
      next(repeatedAuthorizationError());
      return;
    }
    if (problem !== undefined) {
      next(problem.lookupFailed);
      return;
    }
    const message = req.headers.authorization
      ? 'Invalid or revoked API key'
      : 'Missing API key: send Authorization: Bearer <API key>';
    next(new AppError('unauthorized', message, WWW_AUTHENTICATE));
  };
}

/**
 * 403 `insufficient_scope` (RFC 6750 §3.1) when the key lacks the scope the contract route names in its metadata.
 * Runs first among a ts-rest route's handlers, so before the body is read or validated. A request it lets through is
 * accepted: only then is the key's use noted (`lastUsedAt` is the last accepted request, never a refusal).
 */
export function requireScope(lastUsed: Pick<LastUsedRecorder, 'record'>): RequestHandler {
  return (req, _res, next) => {
    const scope = (req.tsRestRoute?.metadata as RouteDocs | undefined)?.scope;
    if (scope === undefined || req.apiKey?.scopes.includes(scope)) {
      if (req.apiKey) lastUsed.record(req.apiKey.id);
      next();
      return;
    }
    next(insufficientScope(scope));
  };
}

function insufficientScope(scope: Scope): AppError {
  return new AppError('insufficient_scope', `This API key lacks the ${scope} scope`, {
    'WWW-Authenticate': `Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`,
  });
}

/**
 * Whether the request's bearer token is a configured secret (`ADMIN_TOKEN`, `METRICS_TOKEN`): compared in constant
 * time, both hashed first so lengths do not leak; `repeated` when Authorization was sent more than once.
 */
export function secretCredential(
  req: Pick<Request, 'headers' | 'rawHeaders'>,
  secret: string,
): 'valid' | 'invalid' | 'repeated' {
  const token = bearerToken(req);
  if (token === REPEATED_AUTHORIZATION) return 'repeated';
  if (!token) return 'invalid';
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(token), digest(secret)) ? 'valid' : 'invalid';
}

/** The refusal of a request whose Authorization header came more than once (the admin API, /metrics, /v1 alike). */
export const repeatedAuthorizationError = () =>
  new AppError('invalid_request', 'Send one Authorization header, not several');
