import { isIP } from 'node:net';
import type { Request } from 'express';

/**
 * The client's address for keyless rate limits: Express's `req.ip`, which follows `X-Forwarded-For` only through the
 * proxies `TRUST_PROXY` trusts (counted from the right, never the client-supplied leftmost entry). A value that is not
 * an IP address (a proxy passing garbage along) is not trusted: the socket's address is used instead.
 * IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`) are given as IPv4, so one client has one identity.
 */
export function clientIp(req: Request): string {
  const ip = req.ip;
  const address = ip !== undefined && isIP(ip) !== 0 ? ip : req.socket.remoteAddress;
  if (!address) return 'unknown';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
