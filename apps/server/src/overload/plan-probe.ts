import type { IncomingMessage } from 'node:http';
import type { ApiKeyRecord } from '../db/types.js';
import { bearerToken } from '../http/auth.js';
import { connectionKeyHash } from '../keys/connection-key.js';
import { KEY_LOOKUP_NEEDED, type KeyResolver } from '../keys/resolver.js';
import type { PlanProbe } from './admission.js';

/** What the key cache alone says of a request's bearer key (no lookup); undefined without one. */
function peekKey(keys: Pick<KeyResolver, 'peek'>, req: IncomingMessage) {
  const token = bearerToken(req);
  return typeof token === 'string' ? keys.peek(connectionKeyHash(req, token)) : undefined;
}

/**
 * The admission gate's view of a request's key, from the key cache alone: the plan of an active cached key, `none`
 * without a valid one, undefined when only a lookup can tell (the second gate decides).
 */
export function planProbe(keys: Pick<KeyResolver, 'peek'>): PlanProbe {
  return (req: IncomingMessage) => {
    const resolution = peekKey(keys, req);
    if (resolution === KEY_LOOKUP_NEEDED) return undefined;
    return typeof resolution === 'object' ? resolution.plan : 'none';
  };
}

/** The active key of a request when the key cache holds it; undefined otherwise (no lookup is made). */
export function keyProbe(keys: Pick<KeyResolver, 'peek'>): (req: IncomingMessage) => ApiKeyRecord | undefined {
  return (req: IncomingMessage) => {
    const resolution = peekKey(keys, req);
    return typeof resolution === 'object' ? resolution : undefined;
  };
}
