import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startMain } from './main-process.js';
import { useTestServer } from './helpers.js';
import { refusesConnections } from './listen.js';
import { errorResponse, exchange } from './raw-http.js';

describe("what Node's HTTP layer refuses gets the Error body too", () => {
  const ctx = useTestServer('sqlite');
  const port = () => Number(new URL(ctx.server.url).port);

  it('431 for headers over 16 KiB', async () => {
    const res = errorResponse(
      await exchange(port(), `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(res.status).toBe(431);
    expect(res.contentType).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ code: 'request_header_fields_too_large', status: 431 });
  });

  it('400 for a malformed request', async () => {
    for (const garbage of [
      'GARBAGE\r\n\r\n',
      'GET /v1/pets HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      'GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
    ]) {
      const res = errorResponse(await exchange(port(), garbage));
      expect(res.status, garbage).toBe(400);
      expect(res.body, garbage).toMatchObject({ code: 'invalid_request', status: 400 });
    }
  });
});

describe('graceful stop', () => {
  const dir = mkdtempSync(join(tmpdir(), 'graceful-stop-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = (name: string, extra: Record<string, string> = {}) => ({
    DATABASE_URL: `file:${join(dir, `${name}.db`)}`,
    ...extra,
  });

  it('answers a request whose connection was accepted before SIGTERM but whose bytes arrive after the server stopped accepting', async () => {
    const server = await startMain(env('race', { SHUTDOWN_DRAIN_MS: '0' }));
    // Accepted by the server, nothing sent yet: the state in which Node's server.close() treats a connection as idle.
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let response = '';
    socket.on('data', (d: Buffer) => (response += d.toString()));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    // Let the server see the connection before the signal.
    await new Promise((resolve) => setTimeout(resolve, 200));
    server.child.kill('SIGTERM');
    // Deterministic: the request is sent only once the server refuses new connections, i.e. after it began to stop.
    expect(await refusesConnections(`${server.url}/healthz`)).toBe(true);
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await closed;
    expect(response).toMatch(/^HTTP\/1\.1 200 /);
    expect(response).toMatch(/\r\nConnection: close\r\n/i);
    expect(await server.exited).toBe(0);
  });

  it('keeps serving during SHUTDOWN_DRAIN_MS with /readyz 503, then stops accepting and exits 0', async () => {
    const server = await startMain(env('drain', { SHUTDOWN_DRAIN_MS: '1500' }));
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    server.child.kill('SIGTERM');
    let draining = false;
    for (let i = 0; i < 100 && !draining; i++) {
      draining = (await fetch(`${server.url}/readyz`)).status === 503;
      if (!draining) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(draining).toBe(true);
    // Still accepting and answering during the drain; each answer closes its connection.
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('connection')).toBe('close');
    expect(await server.exited).toBe(0);
    expect(server.output()).toMatch(/"drainMs":1500/);
  });
});
