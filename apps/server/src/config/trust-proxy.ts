import { isIP } from 'node:net';

/** Express's names for address ranges (proxy-addr): loopback, link-local and unique-local (private) networks. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** What Express's `trust proxy` setting receives: `false`, a number of hops, or addresses, CIDRs and range names. */
export type TrustProxy = false | number | string[];

/**
 * Parses `TRUST_PROXY`: `false`/`0` (trust no proxy: the socket's address is the client), a number of proxy hops in
 * front of the server (`1` for one load balancer), `true` (the same as `1`), or a comma-separated list of trusted proxy
 * addresses, CIDRs and the names `loopback`, `linklocal`, `uniquelocal`. Never "trust everything", which would hand the
 * client's own leftmost `X-Forwarded-For` entry to the rate limiter. Throws on anything else.
 */
export function parseTrustProxy(value: string): TrustProxy {
  const v = value.trim().toLowerCase();
  if (v === 'false' || v === 'no' || v === '0' || v === '') return false;
  if (v === 'true' || v === 'yes') return 1;
  if (/^[0-9]+$/.test(v)) {
    const hops = Number(v);
    if (hops > 32) throw new Error('TRUST_PROXY hop count must be at most 32');
    return hops;
  }
  const entries = v.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (NAMED_RANGES.has(entry)) continue;
    const [address, prefix, extra] = entry.split('/');
    const family = address ? isIP(address) : 0;
    const validPrefix =
      prefix === undefined ||
      (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32)) ||
      (family === 4 && isIP(prefix) === 4);
    if (family === 0 || extra !== undefined || !validPrefix) {
      throw new Error(
        `TRUST_PROXY: "${entry}" is not an IP address, a CIDR or one of loopback, linklocal, uniquelocal (or give a hop count, or false)`,
      );
    }
  }
  return entries;
}
