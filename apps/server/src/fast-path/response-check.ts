import { validateResponse, type AppRoute } from '@ts-rest/core';
import type { Express, Response } from 'express';
import { memoOf } from './serialized-body.js';

/**
 * Checks every JSON answer of a contract route against the contract's response schema (tests: `validateResponses`),
 * without replacing it: a parsed copy of the bytes the answer sends is validated, and those bytes go out unchanged.
 * ts-rest's own `responseValidation` sends zod's rebuilt value instead (keys in the schema's order, unknown keys
 * dropped), so tests would not see what production sends. An answer that breaks the contract throws ts-rest's
 * ResponseValidationError into the route's error path (a 500), before anything is sent.
 *
 * Rule relied on: ts-rest sets `req.tsRestRoute` to the route before its handlers and answers through `res.json`
 * (lean-json.ts, which this wraps: install it after). The canary (response-check.test.ts) fails if either stops.
 */
export function installResponseCheck(app: Express): void {
  const send = app.response.json;
  app.response.json = function json(this: Response, value: unknown) {
    const route = this.req.tsRestRoute as AppRoute | undefined;
    if (route) {
      const sent = memoOf(value)?.entity.body ?? JSON.stringify(value);
      const body: unknown = sent === undefined ? undefined : JSON.parse(sent);
      validateResponse({ appRoute: route, response: { status: this.statusCode, body } });
    }
    return send.call(this, value);
  };
}
