import type { IncomingMessage, ServerResponse } from 'node:http';
import { rateLimitErrorBody, rateLimitHeaders } from './headers.js';
import type { RateLimitDecision, RateLimiter } from './limiter.js';
import type { WindowLimit } from './types.js';

/** Who is calling and which windows apply (resolved by the server). */
export interface RateLimitIdentity {
  /** Identity key: the API key id, or `ip:<address>` for anonymous callers. */
  readonly key: string;
  /** Windows for this identity, e.g. `minuteAndDay({ perMinute: 60, perDay: 1000 })`. */
  readonly windows: readonly WindowLimit[];
}

/** Express-compatible `next`. */
export type NextFunction = (err?: unknown) => void;

/** Metrics hooks. Errors thrown by hooks are passed to `next(err)`. */
export interface RateLimitHooks<Req> {
  /** Every decision (allowed, rate limited, banned). */
  onDecision?(decision: RateLimitDecision, req: Req): void;
  /** The request whose refusal started a ban. */
  onBan?(identity: string, decision: RateLimitDecision, req: Req): void;
  /** A decision answered by the fallback store because the primary failed (once per such request). */
  onFallback?(err: unknown, decision: RateLimitDecision, req: Req): void;
}

/** Options of {@link rateLimit}. */
export interface RateLimitMiddlewareOptions<Req extends IncomingMessage, Res extends ServerResponse> {
  /** The limiter (see `createLimiter`). */
  readonly limiter: RateLimiter;
  /** Resolves the identity and its windows. Errors go to `next(err)`. */
  readonly identify: (req: Req) => RateLimitIdentity | Promise<RateLimitIdentity>;
  /** Return `true` to bypass the limiter entirely (no headers, nothing charged). */
  readonly skip?: (req: Req) => boolean | Promise<boolean>;
  /**
   * Replaces the default 429 response. Headers (incl. `Retry-After`) are already set.
   * Default: JSON `{ code, message, status: 429 }`.
   */
  readonly onRefused?: (req: Req, res: Res, next: NextFunction, decision: RateLimitDecision) => void;
  /** Metrics hooks. */
  readonly hooks?: RateLimitHooks<Req>;
}

/** The default refusal: 429 with the Error body of the decision (headers are already set). */
function refuse(res: ServerResponse, decision: RateLimitDecision): void {
  const body = JSON.stringify(rateLimitErrorBody(decision));
  res.statusCode = 429;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** What the middleware does with a decision: hooks, headers, then `next()` or the refusal. */
function answerer<Req extends IncomingMessage, Res extends ServerResponse>(
  options: Pick<RateLimitMiddlewareOptions<Req, Res>, 'hooks' | 'onRefused'>,
): (decision: RateLimitDecision, req: Req, res: Res, next: NextFunction) => void {
  const { hooks, onRefused } = options;
  return (decision, req, res, next) => {
    try {
      hooks?.onDecision?.(decision, req);
      if (decision.fallbackError !== undefined) hooks?.onFallback?.(decision.fallbackError, decision, req);
      if (decision.banStarted) hooks?.onBan?.(decision.key, decision, req);
    } catch (err) {
      next(err);
      return;
    }
    if (!res.headersSent) {
      const headers = rateLimitHeaders(decision);
      for (const name in headers) res.setHeader(name, headers[name]!);
    }
    if (decision.allowed) next();
    else if (onRefused !== undefined) onRefused(req, res, next, decision);
    else refuse(res, decision);
  };
}

/**
 * Express (or plain `node:http`) middleware. For each request: `skip` → `identify`
 * → one atomic `limiter.consume`. Rate-limit headers are set on every response it
 * lets through (before `next()`, so later 4xx/5xx carry them) and on its own 429s.
 * Errors from `identify`, the store (e.g. `RateLimitStoreUnavailableError`) or hooks go to `next(err)`.
 *
 * @example
 * app.use('/v1', rateLimit({
 *   limiter,
 *   identify: async (req: express.Request) => ({ key: req.apiKey.id, windows: minuteAndDay(req.apiKey.quota) }),
 * }));
 */
export function rateLimit<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse>(
  options: RateLimitMiddlewareOptions<Req, Res>,
): (req: Req, res: Res, next: NextFunction) => void {
  const { limiter, identify, skip } = options;
  const consumeSync = limiter.consumeSync;
  const answer = answerer(options);

  const decide = async (identity: RateLimitIdentity | Promise<RateLimitIdentity>): Promise<RateLimitDecision> => {
    const { key, windows } = await identity;
    return limiter.consume(key, windows);
  };

  const handleWithSkip = async (req: Req, res: Res, next: NextFunction): Promise<void> => {
    let decision: RateLimitDecision;
    try {
      if (await skip!(req)) {
        next();
        return;
      }
      decision = await decide(identify(req));
    } catch (err) {
      next(err);
      return;
    }
    answer(decision, req, res, next);
  };

  return (req, res, next) => {
    if (skip !== undefined) {
      void handleWithSkip(req, res, next);
      return;
    }
    let identity: RateLimitIdentity | Promise<RateLimitIdentity>;
    let decision: RateLimitDecision | undefined;
    try {
      identity = identify(req);
      // A synchronous identity and a store that decides in-process: no promise on the request's path.
      if (consumeSync !== undefined && !isPromiseLike(identity)) decision = consumeSync(identity.key, identity.windows);
    } catch (err) {
      next(err);
      return;
    }
    if (decision !== undefined) answer(decision, req, res, next);
    else
      decide(identity).then(
        (d) => answer(d, req, res, next),
        (err: unknown) => next(err),
      );
  };
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
