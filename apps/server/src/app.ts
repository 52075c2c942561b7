import { randomUUID } from 'node:crypto';
import { contract } from '@animal-store/contract';
import { buildOpenApiDocument } from '@animal-store/contract/openapi';
import { createExpressEndpoints, RequestValidationError } from '@ts-rest/express';
import express, { type Express, type RequestHandler } from 'express';
import type { Database } from './db/types.js';
import { requireApiKey, resolveApiKey } from './http/auth.js';
import { jsonBody } from './http/body.js';
import { errorHandler, methodNotAllowed, notFound } from './http/errors.js';
import { deprecationHeaders, petsRouter } from './http/pets.js';
import { validationError } from './http/validation.js';
import { KeyResolver } from './keys.js';
import type { Logger } from './logger.js';

export interface AppDeps {
  db: Database;
  logger: Logger;
  /** How long key lookups are cached in-process (ms). */
  keyCacheTtlMs?: number;
  /** Rate-limit middleware, mounted at the front of /v1 after the key is resolved (sets X-RateLimit-* on every answer). */
  rateLimit?: RequestHandler;
  /** Trust X-Forwarded-For (behind a proxy). */
  trustProxy?: boolean;
  /** Validate every response against the contract (tests); costs time, so off in production. */
  validateResponses?: boolean;
  /** Clock for the key cache (tests). */
  now?: () => number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const requestContext =
  (logger: Logger): RequestHandler =>
  (req, res, next) => {
    const given = req.headers['x-request-id'];
    req.id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info(
        { reqId: req.id, method: req.method, path: req.path, status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 },
        'request',
      );
    });
    next();
  };

/** Paths of the contract with the methods each has, for 405 answers. */
function allowedMethods(): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const route of Object.values(contract)) {
    const methods = byPath.get(route.path) ?? [];
    methods.push(route.method);
    if (route.method === 'GET') methods.push('HEAD');
    byPath.set(route.path, methods);
  }
  return byPath;
}

/** Builds the Express app from explicit dependencies. Listening is main.ts's job. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy ?? false);

  const keys = new KeyResolver(deps.db.apiKeys, deps.keyCacheTtlMs ?? 5000, deps.now);
  const openApiJson = JSON.stringify(buildOpenApiDocument());

  app.use(requestContext(deps.logger));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    deps.db.ping().then(
      () => res.json({ status: 'ready' }),
      (err: unknown) => {
        deps.logger.warn({ err }, 'readiness check failed: database unreachable');
        res.status(503).json({ code: 'service_unavailable', message: 'Database unreachable', status: 503 });
      },
    );
  });

  const v1 = express.Router({ strict: false });
  // getPet's deprecation headers go on before anything can answer (401 and 429 included).
  v1.use('/pets/:petId', deprecationHeaders);
  // The identity (API key or client address) is needed by the rate limiter, which answers before authentication.
  v1.use(resolveApiKey(keys));
  if (deps.rateLimit) v1.use(deps.rateLimit);
  v1.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(openApiJson);
  });
  v1.use(requireApiKey);
  app.use('/v1', v1);

  createExpressEndpoints(contract, petsRouter(deps.db.pets), app, {
    logInitialization: false,
    responseValidation: deps.validateResponses ?? false,
    // Bodies are read only for a matched route, after authentication.
    globalMiddleware: [jsonBody()],
    requestValidationErrorHandler: (err, _req, _res, next) => next(validationError(err)),
  });
  for (const [path, methods] of allowedMethods()) app.all(path, methodNotAllowed(methods));

  app.use(notFound);
  app.use((err: unknown, _req: express.Request, _res: express.Response, next: express.NextFunction) => {
    next(err instanceof RequestValidationError ? validationError(err) : err);
  });
  app.use(errorHandler(deps.logger));
  return app;
}
