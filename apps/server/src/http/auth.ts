import { createHash, timingSafeEqual } from 'node:crypto';
import type { RouteDocs, Scope } from '@animal-store/contract';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { LastUsedRecorder } from '../keys/last-used.js';
import { KEY_LOOKUP_NEEDED, type KeyResolution, type KeyResolver } from '../keys/resolver.js';
import { HttpError } from './errors.js';

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

/**
 * Resolves the bearer key (if any) onto `req.apiKey` without refusing anything: the rate limiter needs the identity
 * first. Refuses cheaply, before any key lookup: when the key is not cached and the client address is currently refused
 * (over its keyless limit, or banned), `refused` answers the 429 and no lookup is made.
 */
export function resolveApiKey(
  keys: KeyResolver,
  refused?: (req: Request, res: Response, next: NextFunction, lookup: () => void) => boolean,
): RequestHandler {
  return (req, res, next) => {
    const header = req.headers.authorization;
    if (header !== undefined && repeatedAuthorization(req.rawHeaders)) {
      req.apiKey = null;
      req.apiKeyProblem = 'duplicate_authorization';
      next();
      return;
    }
    const match = header ? BEARER.exec(header) : null;
    if (!match?.[1]) {
      req.apiKey = null;
      next();
      return;
    }
    const cached = keys.peek(match[1]);
    if (cached !== KEY_LOOKUP_NEEDED) {
      settle(req, cached);
      next();
      return;
    }
    const raw = match[1];
    const lookup = () =>
      keys.resolve(raw).then(
        (resolution) => {
          settle(req, resolution);
          next();
        },
        (err: unknown) => {
          // Decided after the limiter, so the 503 carries the rate-limit headers (charged to the client address).
          req.apiKey = null;
          req.apiKeyProblem = { lookupFailed: err };
          next();
        },
      );
    if (refused?.(req, res, next, () => void lookup())) return;
    void lookup();
  };
}

/** 401 unless `resolveApiKey` found an active key, decided before any input validation; notes the key's use. */
export function requireApiKey(lastUsed: Pick<LastUsedRecorder, 'record'>): RequestHandler {
  return (req, _res, next) => {
    if (req.apiKey) {
      lastUsed.record(req.apiKey.id);
      next();
      return;
    }
    if (req.apiKeyExpired) {
      next(new HttpError('unauthorized', 'API key expired', EXPIRED));
      return;
    }
    const problem = req.apiKeyProblem;
    if (problem === 'duplicate_authorization') {
      next(new HttpError('invalid_request', 'Send one Authorization header, not several'));
      return;
    }
    if (problem !== undefined) {
      next(problem.lookupFailed);
      return;
    }
    const message = req.headers.authorization
      ? 'Invalid or revoked API key'
      : 'Missing API key: send Authorization: Bearer <API key>';
    next(new HttpError('unauthorized', message, WWW_AUTHENTICATE));
  };
}

/**
 * 403 `insufficient_scope` (RFC 6750 §3.1) when the key lacks the scope the contract route names in its metadata.
 * Runs first among a ts-rest route's handlers, so before the body is read or validated.
 */
export const requireScope: RequestHandler = (req, _res, next) => {
  const scope = (req.tsRestRoute?.metadata as RouteDocs | undefined)?.scope;
  if (scope === undefined || req.apiKey?.scopes.includes(scope)) {
    next();
    return;
  }
  next(insufficientScope(scope));
};

function insufficientScope(scope: Scope): HttpError {
  return new HttpError('insufficient_scope', `This API key lacks the ${scope} scope`, {
    'WWW-Authenticate': `Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`,
  });
}

/** Constant-time check of a bearer token against a configured secret (hashed first so lengths do not leak). */
export function bearerMatches(header: string | undefined, secret: string): boolean {
  const token = header ? BEARER.exec(header)?.[1] : undefined;
  if (!token) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(token), digest(secret));
}
