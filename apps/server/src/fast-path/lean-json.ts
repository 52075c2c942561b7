/**
 * JSON answers without Express's general `res.send` path (content-type parsing, charset handling, a second look at the
 * body): one `JSON.stringify`, `Content-Type` and `Content-Length`, and for a 2xx GET/HEAD a strong `ETag` with
 * If-None-Match answered 304 (no body, no content headers; every other header kept). HEAD gets the headers only.
 * Why: that path does work these answers never need, on every answer (docs/architecture.md#fast-paths).
 *
 * Rule relied on: Express's `res.json` is a method of the app's response prototype (`app.response`), which
 * ts-rest and the routes call for every JSON answer; replacing it there changes every answer of this app and no other.
 * The canary (lean-json.test.ts) fails if ts-rest stops answering through `res.json`.
 */
import { hash } from 'node:crypto';
import type { Express, Response } from 'express';
import { memoOf, type AnswerMemo } from './serialized-body.js';

/** A strong entity tag of a body, in the format of the `etag` package Express uses (`"<length hex>-<sha1 base64>"`). */
export function strongEtag(body: string): string {
  // crypto.hash: the one-shot digest, cheaper than a Hash object per answer.
  const digest = hash('sha1', body, 'base64').slice(0, 27);
  return `"${Buffer.byteLength(body, 'utf8').toString(16)}-${digest}"`;
}

type Entity = AnswerMemo['entity'];

/**
 * A value made by serializedAs cannot change: its JSON is given, and its length and ETag are computed once and kept in
 * its memo; anything else is serialized per answer.
 */
function entityOf(value: unknown): Entity {
  const memo = memoOf(value);
  if (memo === undefined) return { body: JSON.stringify(value) ?? 'null' };
  return memo.entity;
}

export function installLeanJson(app: Express): void {
  app.response.json = function json(this: Response, value: unknown) {
    const entity = entityOf(value);
    const body = entity.body;
    const req = this.req;
    const method = req.method;
    this.setHeader('Content-Type', 'application/json; charset=utf-8');
    if ((method === 'GET' || method === 'HEAD') && this.statusCode >= 200 && this.statusCode < 300) {
      this.setHeader('ETag', (entity.etag ??= strongEtag(body)));
      if (req.fresh) {
        this.statusCode = 304;
        this.removeHeader('Content-Type');
        this.end();
        return this;
      }
    }
    this.setHeader('Content-Length', (entity.length ??= Buffer.byteLength(body, 'utf8')));
    if (method === 'HEAD') this.end();
    else this.end(body, 'utf8');
    return this;
  };
}
