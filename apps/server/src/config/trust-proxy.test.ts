import express from 'express';
import { describe, expect, it } from 'vitest';
import { parseTrustProxy } from './trust-proxy.js';

/** What Express makes of the setting: `req.ip` for a socket address and an X-Forwarded-For header. */
function ipFor(setting: ReturnType<typeof parseTrustProxy>, socket: string, xff: string): string | undefined {
  const app = express();
  app.set('trust proxy', setting);
  const req = Object.create(app.request) as express.Request;
  Object.assign(req, {
    app,
    headers: { 'x-forwarded-for': xff },
    socket: { remoteAddress: socket },
    connection: { remoteAddress: socket },
  });
  return req.ip;
}

describe('TRUST_PROXY', () => {
  it('takes false, a hop count (true meaning one), or addresses, CIDRs and range names', () => {
    expect(parseTrustProxy('false')).toBe(false);
    expect(parseTrustProxy('0')).toBe(false);
    expect(parseTrustProxy('true')).toBe(1);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('10.0.0.0/8, 192.168.1.7,loopback')).toEqual(['10.0.0.0/8', '192.168.1.7', 'loopback']);
    expect(parseTrustProxy('fd00::/8')).toEqual(['fd00::/8']);
  });

  it('refuses what is not an address, a CIDR, a range name or a count', () => {
    for (const bad of ['10.0.0.0/33', '10.0.0', 'proxy.internal', '1.2.3.4/8/1', '::1/129', 'everything', '99']) {
      expect(() => parseTrustProxy(bad), bad).toThrow(/TRUST_PROXY/);
    }
  });

  it('never hands the client-supplied leftmost X-Forwarded-For value to the limiter', () => {
    // One load balancer at 10.0.0.5 appends the address it saw; the client sent its own header first.
    const xff = '6.6.6.6, 203.0.113.9';
    expect(ipFor(parseTrustProxy('true'), '10.0.0.5', xff)).toBe('203.0.113.9');
    expect(ipFor(parseTrustProxy('10.0.0.0/8'), '10.0.0.5', xff)).toBe('203.0.113.9');
    // A request that did not come through a trusted proxy: its header is ignored.
    expect(ipFor(parseTrustProxy('10.0.0.0/8'), '198.51.100.1', xff)).toBe('198.51.100.1');
    expect(ipFor(parseTrustProxy('false'), '10.0.0.5', xff)).toBe('10.0.0.5');
  });
});
