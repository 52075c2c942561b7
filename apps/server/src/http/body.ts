import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler } from 'express';
import typeis from 'type-is';
import { AppError } from '../errors/app-error.js';

export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * JSON is UTF-8 (RFC 8259 section 8.1), and bytes that are not UTF-8 are refused, never decoded to U+FFFD and stored:
 * that replacement is what the text rules refuse for lone surrogates.
 */
function verifyUtf8(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding.toLowerCase() !== 'utf-8') {
    throw new AppError('unsupported_media_type', 'Request body must be UTF-8 encoded JSON');
  }
  if (!isUtf8(body)) throw new AppError('invalid_request', 'Request body is not valid UTF-8');
}

/** A Content-Length above the limit: refused before the body is read (it is never read; the connection closes). */
function declaredTooLarge(header: string | undefined): boolean {
  return header !== undefined && /^\d+$/.test(header) && Number(header) > BODY_LIMIT_BYTES;
}

/**
 * JSON bodies for methods that carry one: a body is required (unless `optional`: a missing one reads as `{}`), must be
 * `application/json` (or `+json`) in UTF-8, at most 64 KiB, and valid JSON. Runs after authentication, so a keyless
 * request is refused before its body is read.
 */
export function jsonBody(options: { optional?: boolean } = {}): RequestHandler {
  const parse = express.json({ limit: BODY_LIMIT_BYTES, strict: true, type: () => true, verify: verifyUtf8 });
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
    if (declaredTooLarge(req.headers['content-length'])) {
      // Answered at once: waiting for megabytes only to refuse them costs both sides. The body is not read, so the
      // connection cannot carry another request.
      res.setHeader('Connection', 'close');
      next(new AppError('payload_too_large', 'Request body is larger than 64 KiB'));
      return;
    }
    parse(req, res, next);
  };
}
