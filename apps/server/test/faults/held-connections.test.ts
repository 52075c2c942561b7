import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers.js';
import { useMainOnSqlite } from '../main-process.js';
import { SLOW_PEER_TIMEOUTS } from './expectations.js';

/**
 * A peer that never closes: half-open allowed, so the server's FIN does not make it end its side; it reads what it is
 * sent and never destroys the socket until the test ends.
 */
async function stubbornPeer(port: number, send: string): Promise<{ socket: Socket; received(): string }> {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString()));
  socket.on('error', () => undefined);
  if (send) socket.write(send);
  return { socket, received: () => received };
}

const healthy = (url: string) =>
  fetch(`${url}/healthz`).then(
    (res) => res.status === 200,
    () => false,
  );

/**
 * #24 item 14. Documented bound (docs/production.md, Timeouts and limits): a connection answered with an error that
 * closes it (here 408) is destroyed a short grace period after that answer, whatever the peer does. Before, the
 * server only ended its side: peers that read their 408 and never closed kept their connections counted against
 * MAX_CONNECTIONS, and every new connection was refused.
 */
describe('connections answered 408 whose peers never close', () => {
  const ctx = useMainOnSqlite('faults-held', { ...SLOW_PEER_TIMEOUTS, MAX_CONNECTIONS: '12' });

  it('are destroyed after their 408, so new connections are served while the peers still hold theirs', async () => {
    const { server, key } = ctx;
    const sends = [
      '', // silent: never a byte
      'GET /v1/pets HTTP/1.1\r\nHost: x\r\n', // half-sent headers
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
        'Content-Length: 100\r\n\r\n{"name":', // half-sent body
    ];
    const peers = await Promise.all(Array.from({ length: 12 }, (_, i) => stubbornPeer(server.port, sends[i % 3]!)));
    try {
      // Every slot is taken: a new connection is dropped.
      expect(await healthy(server.url)).toBe(false);
      // Each peer is answered 408 with an Error body (and keeps its socket: it never ends or destroys it)...
      await eventually(() => peers.every((peer) => peer.received().includes('\r\n\r\n{')), 20_000);
      for (const peer of peers) {
        expect(peer.received()).toMatch(/^HTTP\/1\.1 408 /);
        expect(peer.received()).toContain('"code":"request_timeout"');
        expect(peer.socket.destroyed).toBe(false);
      }
      // ...and the server releases the connections all the same: new ones are served.
      await eventually(() => healthy(server.url), 20_000);
      expect(await healthy(server.url)).toBe(true);
      expect(peers.every((peer) => !peer.socket.destroyed)).toBe(true);
    } finally {
      for (const peer of peers) peer.socket.destroy();
    }
  });
});
