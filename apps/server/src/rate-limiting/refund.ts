import { refundDecision, type RateLimitStore } from '@animal-store/rate-limit';
import type { Response } from 'express';
import type { Logger } from '../logger.js';

/**
 * A failed dependency never counts against a client: a request answered 503 for one gives back what the limiter
 * charged it (its key's or its address's windows), so an outage neither uses up a quota nor leads to a ban. Best
 * effort: a refund that fails (the store is down too) is logged and dropped.
 */
export function refundCharge(store: RateLimitStore, logger: Logger): (res: Response) => void {
  return (res) => {
    const charge = res.req.rateLimitCharge;
    if (charge === undefined) return;
    res.req.rateLimitCharge = undefined;
    refundDecision(store, charge).catch((err: unknown) =>
      logger.debug({ err: (err as Error).message }, 'could not refund a rate-limit charge'),
    );
  };
}
