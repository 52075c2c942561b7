import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { KEY_LOOKUP_NEEDED, type KeyResolver } from '../keys.js';
import { HttpError } from './errors.js';

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;
export const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer realm="animal-store"' };

/** Resolves the bearer key (if any) onto `req.apiKey` without refusing anything: the rate limiter needs the identity first. */
export function resolveApiKey(keys: KeyResolver): RequestHandler {
  return (req, _res, next) => {
    const header = req.headers.authorization;
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
    keys.resolve(match[1]).then((record) => {
      req.apiKey = record ?? null;
      next();
    }, next);
  };
}

/** 401 unless `resolveApiKey` found an active key; decided before any input validation. */
export const requireApiKey: RequestHandler = (req, _res, next) => {
  if (req.apiKey) {
    next();
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
