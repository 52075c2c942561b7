/**
 * Express's `req.fresh` refuses to answer 304 when the request carries `Cache-Control: no-cache`, which fetch() adds to
 * every conditional request. That directive is for caches; the origin evaluates If-None-Match regardless (RFC 9110
 * §13.2.1), so this app's requests use the rule below. Express still does the rest: 304 status, no body.
 *
 * Rule relied on: `req.fresh` is a getter of the app's request prototype (`app.request`) that Express's `res.send`
 * and lean-json.ts read; redefining it there changes this app's requests only. The canary (if-none-match.test.ts)
 * fails if Express stops reading it or answers 304 by another rule.
 */
import type { Express, Request } from 'express';

/**
 * RFC 9110 §13.1.2 If-None-Match for GET/HEAD answers with a 2xx status: weak comparison of the entity tags, `*` matching
 * any current representation.
 */
export function noneMatch(ifNoneMatch: string | undefined, etag: string | undefined): boolean {
  if (!ifNoneMatch || !etag) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const current = opaque(etag);
  return ifNoneMatch.split(',').some((tag) => opaque(tag) === current);
}

export function installIfNoneMatch(app: Express): void {
  Object.defineProperty(app.request, 'fresh', {
    configurable: true,
    get(this: Request) {
      if (this.method !== 'GET' && this.method !== 'HEAD') return false;
      const status = this.res?.statusCode ?? 0;
      if (!((status >= 200 && status < 300) || status === 304)) return false;
      const etag = this.res?.getHeader('ETag');
      return noneMatch(this.headers['if-none-match'], typeof etag === 'string' ? etag : undefined);
    },
  });
}
