import { errorBody, type ErrorCode } from '@animal-store/contract';
import type { AppRoute, AppRouter } from '@ts-rest/core';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { AppError } from '../errors/app-error.js';
import { briefly } from '../errors/brief.js';
import { classifyDependencyError } from '../errors/dependency-failure.js';
import { FAILURE_MESSAGE, RETRY_AFTER_SECONDS, type DependencyFailure } from '../errors/dependency-reasons.js';

export function sendError(
  res: Response,
  code: ErrorCode,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  const body = errorBody(code, message);
  // end(), not send(): an error is no representation to revalidate, so it gets no ETag.
  res.status(body.status).set(headers).type('application/json').end(JSON.stringify(body));
}

type ForeignError = {
  type?: unknown;
  status?: unknown;
  statusCode?: unknown;
  code?: unknown;
  message?: unknown;
  name?: unknown;
};

/**
 * Errors raised below us (body-parser, Express's router, zlib) for something the client sent carry a 4xx `status`;
 * map them to our codes with our own messages (theirs may name internals).
 */
function clientError(err: ForeignError): AppError | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
      return new AppError('invalid_request', 'Request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', 'Request body must be UTF-8 encoded JSON');
    default:
      break;
  }
  const status = typeof err.status === 'number' ? err.status : typeof err.statusCode === 'number' ? err.statusCode : 0;
  if (status < 400 || status > 499) return undefined;
  if (status === 413) return new AppError('payload_too_large', 'Request body is larger than 64 KiB');
  if (status === 415) return new AppError('unsupported_media_type', 'Request body must be application/json');
  if (err.name === 'URIError') return new AppError('invalid_request', 'Malformed percent-encoding in the URL');
  if (typeof err.code === 'string' && err.code.startsWith('Z_')) {
    return new AppError('invalid_request', 'Request body could not be decoded as its Content-Encoding says');
  }
  return new AppError('invalid_request', 'Request body could not be read');
}

/**
 * The one error handler: every failure becomes an Error body. A failing dependency is a 503 with `Retry-After`, logged
 * in one line (no stack: an outage must not write kilobytes per request) and counted; an unexpected error is logged
 * with detail and shown without.
 */
export function errorHandler(
  logger: Logger,
  onDependencyFailure?: (failure: DependencyFailure, res: Response) => void,
): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const failure = err instanceof AppError ? undefined : classifyDependencyError(err);
    if (failure) {
      onDependencyFailure?.(failure, res);
      logger.warn(
        { reqId: req.id, method: req.method, path: req.path, reason: failure, ...briefly(err) },
        'dependency unavailable',
      );
      sendError(res, 'service_unavailable', FAILURE_MESSAGE[failure], {
        'Retry-After': String(RETRY_AFTER_SECONDS[failure]),
      });
      return;
    }
    const known = err instanceof AppError ? err : clientError((err ?? {}) as ForeignError);
    if (known) {
      sendError(res, known.code, known.message, known.headers);
      return;
    }
    logger.error({ err, reqId: req.id, method: req.method, path: req.path }, 'unexpected error');
    sendError(res, 'internal_error', 'Internal server error');
  };
}

export const notFound: RequestHandler = (req, res) => {
  sendError(res, 'not_found', `No route for ${req.method} ${req.path}`);
};

/** Paths of a contract with the methods each has, for 405 answers. */
export function allowedMethods(router: AppRouter): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const route of Object.values(router) as AppRoute[]) {
    const methods = byPath.get(route.path) ?? [];
    methods.push(route.method);
    if (route.method === 'GET') methods.push('HEAD');
    byPath.set(route.path, methods);
  }
  return byPath;
}

/** 405 with `Allow` for a known path asked with a method it does not have. */
export function methodNotAllowed(allowed: string[]): RequestHandler {
  const allow = allowed.join(', ');
  return (req, res) => {
    sendError(res, 'method_not_allowed', `${req.method} is not allowed here; allowed: ${allow}`, { Allow: allow });
  };
}
