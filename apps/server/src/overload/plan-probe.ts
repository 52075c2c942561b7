import type { IncomingMessage } from 'node:http';
import type { ApiKeyRecord } from '../db/types.js';
import { bearerToken } from '../http/auth.js';
import { connectionKeyHash } from '../keys/connection-key.js';
import { KEY_LOOKUP_NEEDED, type KeyResolver } from '../keys/resolver.js';
import type { PlanProbe } from './admission.js';

/** The hash of a request's bearer key, remembered on its connection; undefined without a bearer key. */
function keyHash(req: IncomingMessage): string | undefined {
  const token = bearerToken(req);
  return typeof token === 'string' ? connectionKeyHash(req, token) : undefined;
}

/**
 * The admission gate's view of a request's key, from the key cache alone: the plan of an active cached key (a lookup
 * past its TTL still counts: peekForPriority says why), `none` without a valid one, undefined when only a lookup can
 * tell (the second gate decides).
 */
export function planProbe(keys: Pick<KeyResolver, 'peekForPriority'>): PlanProbe {
  return (req: IncomingMessage) => {
    const resolution = keys.peekForPriority(keyHash(req));
    if (resolution === KEY_LOOKUP_NEEDED) return undefined;
    return typeof resolution === 'object' ? resolution.plan : 'none';
  };
}

/**
 * The active key of a request when the key cache holds it within its TTL; undefined otherwise (no lookup is made). Not
 * past the TTL, as the plan is: the door refuses on the key's own limits, which a lookup of now must tell.
 */
export function keyProbe(keys: Pick<KeyResolver, 'peek'>): (req: IncomingMessage) => ApiKeyRecord | undefined {
  return (req: IncomingMessage) => {
    const resolution = keys.peek(keyHash(req));
    return typeof resolution === 'object' ? resolution : undefined;
  };
}
