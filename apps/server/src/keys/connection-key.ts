import type { IncomingMessage } from 'node:http';
import { keyHashOf } from './resolver.js';

/** The last bearer key a connection sent, and its hash (undefined: not a key). */
interface LastKey {
  readonly raw: string;
  readonly hash: string | undefined;
}

/**
 * Each connection's last key, beside the connection rather than on it: a property added to node:http's sockets would
 * give them a second shape, and slow every access Node's own HTTP code makes to them.
 */
const lastKeys = new WeakMap<object, LastKey>();

/**
 * The hash of a request's bearer key (keyHashOf), remembered on its connection. The key is read up to three times per
 * request (the door, the load-shedding gate, the key lookup), and a client usually sends one key on every request of a
 * connection: remembered, it is checked and hashed once per request at most, and once per connection for such a
 * client. Under overload the hash is most of what the gate spends on a request it refuses. Only the connection's last
 * key is kept, and it goes with the connection. It is compared in constant time, since a proxy may carry several
 * clients' requests on one connection.
 */
export function connectionKeyHash(req: Pick<IncomingMessage, 'socket'>, raw: string): string | undefined {
  const connection = req.socket as object | null;
  if (!connection) return keyHashOf(raw);
  const last = lastKeys.get(connection);
  if (last !== undefined && sameText(last.raw, raw)) return last.hash;
  const hash = keyHashOf(raw);
  lastKeys.set(connection, { raw, hash });
  return hash;
}

/** Whether `a` and `b` are the same text, in a time that depends on their lengths only. */
export function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}
