import { ADMIN_PREFIX, adminContract, PAGE_LIMIT } from '@animal-store/contract';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type Express, type RequestHandler } from 'express';
import { apiKeyView, type KeyAdmin } from '../keys/admin.js';
import { bearerMatches, WWW_AUTHENTICATE } from './auth.js';
import { jsonBody } from './body.js';
import { allowedMethods, HttpError, methodNotAllowed } from './errors.js';
import { decodeCursor, encodeCursor, nextLink } from './paging.js';
import { validationError } from './validation.js';

const s = initServer();

/** The admin contract's operations on the shared key operations (`KeyAdmin`); inputs arrive validated. */
export function adminRouter(admin: KeyAdmin) {
  return s.router(adminContract, {
    createKey: async ({ body }) => {
      const { key, secret } = await admin.create(body);
      return { status: 201, body: { key: apiKeyView(key), secret } };
    },
    listKeys: async ({ query, req, res }) => {
      const limit = query.limit ?? PAGE_LIMIT.default;
      const afterId = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      // One extra row tells whether another page exists, without a COUNT.
      const rows = await admin.list({ limit: limit + 1, afterId });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      if (rows.length > limit && last)
        res.setHeader('Link', nextLink(req.baseUrl + req.path, { limit, cursor: encodeCursor(last.id) }));
      return { status: 200, body: page.map(apiKeyView) };
    },
    getKey: async ({ params }) => ({ status: 200, body: apiKeyView(await admin.get(params.id)) }),
    updateKey: async ({ params, body }) => ({ status: 200, body: apiKeyView(await admin.update(params.id, body)) }),
    revokeKey: async ({ params }) => ({ status: 200, body: apiKeyView(await admin.revoke({ id: params.id })) }),
    rotateKey: async ({ params, body }) => {
      const { key, secret } = await admin.rotate(params.id, body.overlapSeconds);
      return { status: 201, body: { key: apiKeyView(key), secret } };
    },
    getKeyUsage: async ({ params }) => ({ status: 200, body: await admin.usage(params.id) }),
    liftKeyBan: async ({ params }) => {
      await admin.liftBan(params.id);
      return { status: 204, body: undefined };
    },
  });
}

export interface AdminApiOptions {
  admin: KeyAdmin;
  /** `ADMIN_TOKEN`: compared in constant time with the bearer token. */
  token: string;
  /** The per-address limiter of the admin API. */
  rateLimiting: RequestHandler;
  validateResponses: boolean;
}

/**
 * Mounts the admin API on `app`: per-address limits, then the admin token (401 without it), then the contract's
 * routes (JSON bodies, optional where the contract's are) and 405 for their paths with other methods. Mount it only
 * when `ADMIN_TOKEN` is set: without it the admin paths fall through to the 404 of unknown routes.
 */
export function mountAdminApi(app: Express, options: AdminApiOptions): void {
  const gate = express.Router();
  gate.use((_req, res, next) => {
    // Key listings and secrets: nobody keeps them.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  gate.use(options.rateLimiting);
  gate.use((req, _res, next) => {
    if (bearerMatches(req.headers.authorization, options.token)) next();
    else next(new HttpError('unauthorized', 'Admin routes need Authorization: Bearer <ADMIN_TOKEN>', WWW_AUTHENTICATE));
  });
  app.use(ADMIN_PREFIX, gate);
  createExpressEndpoints(adminContract, adminRouter(options.admin), app, {
    logInitialization: false,
    responseValidation: options.validateResponses,
    globalMiddleware: [jsonBody({ optional: true })],
    requestValidationErrorHandler: (err, _req, _res, next) => next(validationError(err)),
  });
  for (const [path, methods] of allowedMethods(adminContract)) app.all(path, methodNotAllowed(methods));
}
