import { ADMIN_PREFIX, adminContract, encodeCursor, MAX_KEY_ID, PAGE_LIMIT } from '@animal-store/contract';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type Express, type RequestHandler } from 'express';
import type { KeyAdmin } from '../keys/admin.js';
import { apiKeyView } from '../keys/view.js';
import type { AdminRateLimiting } from '../rate-limiting/admin-limits.js';
import { repeatedAuthorizationError, secretCredential, WWW_AUTHENTICATE } from './auth.js';
import { jsonBody } from './body.js';
import { AppError } from '../errors/app-error.js';
import { allowedMethods, methodNotAllowed } from './error-handler.js';
import { afterIdOf, nextLink } from './paging.js';
import { validationError } from './validation.js';

const s = initServer();

/** The admin contract's operations on the shared key operations (`KeyAdmin`); inputs arrive validated. */
export function adminRouter(admin: KeyAdmin) {
  return s.router(adminContract, {
    createKey: async ({ body }) => {
      const { key, secret } = await admin.create(body);
      return { status: 201, body: { key: apiKeyView(key), secret } };
    },
    listKeys: async ({ query, res }) => {
      const limit = query.limit ?? PAGE_LIMIT.default;
      // One extra row tells whether another page exists, without a COUNT.
      const rows = await admin.list({ limit: limit + 1, afterId: afterIdOf(query.cursor, MAX_KEY_ID) });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      if (rows.length > limit && last)
        res.setHeader('Link', nextLink(adminContract.listKeys.path, { limit, cursor: encodeCursor(last.id) }));
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
  /** The admin API's limiters: for requests with the token, and per address for those without. */
  rateLimiting: AdminRateLimiting;
}

/**
 * The gate in front of every admin route. The token is checked first (in constant time), so that the request is
 * limited as what it is: with the right token, in the operators' budget; without it (none, wrong, or Authorization
 * sent twice: 400), per client address, whose bans refuse only requests without the token.
 */
function adminGate(options: AdminApiOptions): RequestHandler {
  const unauthorized = () =>
    new AppError('unauthorized', 'Admin routes need Authorization: Bearer <ADMIN_TOKEN>', WWW_AUTHENTICATE);
  return (req, res, next) => {
    const credential = secretCredential(req, options.token);
    if (credential === 'valid') {
      options.rateLimiting.operators(req, res, next);
      return;
    }
    options.rateLimiting.strangers(req, res, (err?: unknown) => {
      if (err !== undefined) next(err);
      else next(credential === 'repeated' ? repeatedAuthorizationError() : unauthorized());
    });
  };
}

/**
 * Mounts the admin API on `app`: its gate (limits and the admin token), then the contract's routes (JSON bodies,
 * optional where the contract's are) and 405 for their paths with other methods. Mount it only when `ADMIN_TOKEN` is
 * set: without it the admin paths fall through to the 404 of unknown routes.
 */
export function mountAdminApi(app: Express, options: AdminApiOptions): void {
  const gate = express.Router({ caseSensitive: true, strict: true });
  gate.use((_req, res, next) => {
    // Key listings and secrets: nobody keeps them.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  gate.use(adminGate(options));
  app.use(ADMIN_PREFIX, gate);
  createExpressEndpoints(adminContract, adminRouter(options.admin), app, {
    logInitialization: false,
    globalMiddleware: [jsonBody({ optional: true })],
    requestValidationErrorHandler: (err, _req, _res, next) => next(validationError(err)),
  });
  for (const [path, methods] of allowedMethods(adminContract)) app.all(path, methodNotAllowed(methods));
}
