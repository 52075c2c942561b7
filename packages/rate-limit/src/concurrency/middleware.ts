import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction } from '../middleware.js';
import type { ConcurrencyDecision, ConcurrencyLimiter } from './limiter.js';

/** Who is calling and how many of their requests may be in flight at once (resolved by the server). */
export interface ConcurrencyIdentity {
  readonly key: string;
  readonly limit: number;
}

/** Options of {@link concurrencyLimit}. */
export interface ConcurrencyLimitOptions<Req extends IncomingMessage, Res extends ServerResponse> {
  readonly limiter: ConcurrencyLimiter;
  /** The identity and its limit, or undefined for a request that is not limited. Errors go to `next(err)`. */
  readonly identify: (req: Req) => ConcurrencyIdentity | undefined;
  /** Answers a refused request (the server's Error body and headers). */
  readonly onRefused: (req: Req, res: Res, next: NextFunction, decision: ConcurrencyDecision) => void;
  readonly hooks?: {
    /** Every decision. */
    onDecision?(decision: ConcurrencyDecision, req: Req): void;
    /** A decision answered by the fallback store because the primary failed. */
    onFallback?(err: unknown, decision: ConcurrencyDecision, req: Req): void;
  };
}

/**
 * Express (or plain `node:http`) middleware holding one slot of the caller's limit for as long as the request is in
 * flight. The slot is given back when the response closes, which Node reports for every way a request ends: answered
 * (success or any error), or its connection gone (a client that disconnects, a timeout that destroys the socket). A
 * request whose connection closed while the slot was being taken gives it back at once and goes no further.
 */
export function concurrencyLimit<
  Req extends IncomingMessage = IncomingMessage,
  Res extends ServerResponse = ServerResponse,
>(options: ConcurrencyLimitOptions<Req, Res>): (req: Req, res: Res, next: NextFunction) => void {
  const { limiter, identify, onRefused, hooks } = options;
  const { acquireSync } = limiter;

  const answer = (decision: ConcurrencyDecision, req: Req, res: Res, next: NextFunction): void => {
    if (decision.allowed) {
      if (res.closed) {
        decision.release();
        return;
      }
      res.once('close', () => decision.release());
    }
    try {
      hooks?.onDecision?.(decision, req);
      if (decision.fallbackError !== undefined) hooks?.onFallback?.(decision.fallbackError, decision, req);
    } catch (err) {
      next(err);
      return;
    }
    if (decision.allowed) next();
    else onRefused(req, res, next, decision);
  };

  return (req, res, next) => {
    let identity: ConcurrencyIdentity | undefined;
    let decision: ConcurrencyDecision | undefined;
    try {
      identity = identify(req);
      if (identity === undefined) {
        next();
        return;
      }
      if (acquireSync !== undefined) decision = acquireSync(identity.key, identity.limit);
    } catch (err) {
      next(err);
      return;
    }
    if (decision !== undefined) answer(decision, req, res, next);
    else
      limiter.acquire(identity.key, identity.limit).then(
        (d) => answer(d, req, res, next),
        (err: unknown) => next(err),
      );
  };
}
