import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useMainOnSqlite } from '../main-process.js';
import { SLOW_PEER_TIMEOUTS } from './expectations.js';

/** Opens a raw connection; `response()` is everything received, `closed` resolves when the server closes it. */
async function raw(port: number): Promise<{ socket: Socket; response(): string; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let response = '';
  socket.on('data', (d: Buffer) => (response += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, response: () => response, closed };
}

function errorOf(response: string): { status: number; body: { code: string; status: number } } {
  const [head, body] = response.split('\r\n\r\n');
  expect(head).toMatch(/content-type: application\/json/i);
  return {
    status: Number(/^HTTP\/1\.1 (\d+)/.exec(head ?? '')?.[1]),
    body: JSON.parse(body ?? '') as { code: string; status: number },
  };
}

describe('slow and idle clients', () => {
  const ctx = useMainOnSqlite('faults-slow', { ...SLOW_PEER_TIMEOUTS, MAX_CONNECTIONS: '20' });

  it('cuts slow headers and slow bodies with a 408 Error body, while other clients are served', async () => {
    const { key, server } = ctx;
    const slowHeaders = await raw(server.port);
    slowHeaders.socket.write('GET /v1/pets HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => slowHeaders.socket.write('X-Slow: 1\r\n'), 200);
    const slowBody = await raw(server.port);
    slowBody.socket.write(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":"a`,
    );
    try {
      // Served meanwhile.
      expect((await fetch(`${server.url}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
      await Promise.all([slowHeaders.closed, slowBody.closed]);
    } finally {
      clearInterval(trickle);
    }
    for (const client of [slowHeaders, slowBody]) {
      const { status, body } = errorOf(client.response());
      expect(status).toBe(408);
      expect(body).toMatchObject({ code: 'request_timeout', status: 408 });
    }
  });

  it('refuses connections over MAX_CONNECTIONS and says so in the log, then serves again', async () => {
    const { server } = ctx;
    const idle = await Promise.all(Array.from({ length: 20 }, () => raw(server.port)));
    const extra = await raw(server.port);
    await extra.closed; // dropped by the server at once
    expect(extra.response()).toBe('');
    for (const client of idle) client.socket.destroy();
    await Promise.all(idle.map((client) => client.closed));
    let served = false;
    for (let i = 0; i < 100 && !served; i++) {
      served =
        (await fetch(`${server.url}/healthz`).then(
          (res) => res.status,
          () => 0,
        )) === 200;
      if (!served) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(served).toBe(true);
    expect(
      server
        .logs()
        .some(
          (line) => line.msg === 'connection limit reached: refusing new connections' && line.maxConnections === 20,
        ),
    ).toBe(true);
  });
});
