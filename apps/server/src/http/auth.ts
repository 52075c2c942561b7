import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { KEY_LOOKUP_NEEDED, type KeyResolver } from '../keys.js';
import { HttpError } from './errors.js';

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;
export const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer realm="animal-store"' };

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
      req.apiKey = cached ?? null;
      next();
      return;
    }
    const raw = match[1];
    const lookup = () =>
      keys.resolve(raw).then(
        (record) => {
          req.apiKey = record ?? null;
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

/** 401 unless `resolveApiKey` found an active key; decided before any input validation. */
export const requireApiKey: RequestHandler = (req, _res, next) => {
  if (req.apiKey) {
    next();
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

/** Constant-time check of a bearer token against a configured secret (hashed first so lengths do not leak). */
export function bearerMatches(header: string | undefined, secret: string): boolean {
  const token = header ? BEARER.exec(header)?.[1] : undefined;
  if (!token) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(token), digest(secret));
}
