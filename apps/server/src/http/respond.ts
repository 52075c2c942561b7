import { hash } from 'node:crypto';
import type { Express, Response } from 'express';

/** A strong entity tag of a body, in the format of the `etag` package Express uses (`"<length hex>-<sha1 base64>"`). */
export function strongEtag(body: string): string {
  // crypto.hash: the one-shot digest, cheaper than a Hash object per answer.
  const digest = hash('sha1', body, 'base64').slice(0, 27);
  return `"${Buffer.byteLength(body, 'utf8').toString(16)}-${digest}"`;
}

/**
 * JSON answers without Express's general `res.send` path (content-type parsing, charset handling, a second look at the
 * body): one `JSON.stringify`, `Content-Type` and `Content-Length`, and for a 2xx GET/HEAD a strong `ETag` with
 * If-None-Match answered 304 (no body, no content headers; every other header kept). HEAD gets the headers only.
 * The profile of the list under load showed Express's send path at about a tenth of the request's time.
 */
export function leanJson(app: Express): void {
  app.response.json = function json(this: Response, value: unknown) {
    const body = JSON.stringify(value) ?? 'null';
    const req = this.req;
    const method = req.method;
    this.setHeader('Content-Type', 'application/json; charset=utf-8');
    if ((method === 'GET' || method === 'HEAD') && this.statusCode >= 200 && this.statusCode < 300) {
      this.setHeader('ETag', strongEtag(body));
      if (req.fresh) {
        this.statusCode = 304;
        this.removeHeader('Content-Type');
        this.end();
        return this;
      }
    }
    this.setHeader('Content-Length', Buffer.byteLength(body, 'utf8'));
    if (method === 'HEAD') this.end();
    else this.end(body, 'utf8');
    return this;
  };
}
