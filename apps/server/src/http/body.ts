import express, { type RequestHandler } from 'express';
import typeis from 'type-is';
import { AppError } from '../errors/app-error.js';

export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * JSON bodies for methods that carry one: a body is required (unless `optional`: a missing one reads as `{}`), must be
 * `application/json` (or `+json`), at most 64 KiB, and valid JSON. Runs after authentication, so a keyless request is
 * refused before its body is read.
 */
export function jsonBody(options: { optional?: boolean } = {}): RequestHandler {
  const parse = express.json({ limit: BODY_LIMIT_BYTES, strict: true, type: () => true });
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE' || req.method === 'OPTIONS') {
      next();
      return;
    }
    if (!typeis.hasBody(req) || req.headers['content-length'] === '0') {
      if (options.optional) {
        req.body = {};
        next();
        return;
      }
      next(new AppError('invalid_request', 'Request body is required: a JSON object'));
      return;
    }
    if (!typeis(req, ['application/json', '+json'])) {
      next(new AppError('unsupported_media_type', 'Request body must be application/json'));
      return;
    }
    parse(req, res, next);
  };
}
