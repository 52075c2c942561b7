import { execFileSync } from 'node:child_process';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveness, type Liveness } from './liveness.js';

/**
 * Fetches `url` from a child process after `waitMs`, while this thread (the main event loop of the test) is blocked in
 * execFileSync the whole time: whatever answers, answered without it. Returns "status body".
 */
function probeWhileBlocked(url: string, waitMs: number): string {
  const script = `setTimeout(async () => { const r = await fetch(${JSON.stringify(url)}); console.log(r.status + ' ' + (await r.text())); }, ${waitMs});`;
  return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 }).trim();
}

describe('OPS_PORT served by a thread of its own', () => {
  let upstream: Server;
  const started: Liveness[] = [];
  const start = async (stallMs: number) => {
    const liveness = await startLiveness({
      port: 0,
      host: '127.0.0.1',
      upstreamPort: (upstream.address() as AddressInfo).port,
      stallMs,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
    });
    started.push(liveness);
    return `http://127.0.0.1:${liveness.port}`;
  };
  beforeAll(async () => {
    // The main thread's listener of the rest: /readyz, and a 404 for anything else.
    upstream = http.createServer((req, res) => {
      res.writeHead(req.url === '/readyz' ? 200 : 404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(req.url === '/readyz' ? { status: 'ready' } : { code: 'not_found' }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await Promise.all(started.map((l) => l.stop()));
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('answers /healthz while the main event loop is blocked, short of the stall threshold', async () => {
    const origin = await start(60_000);
    expect(probeWhileBlocked(`${origin}/healthz`, 500)).toBe('200 {"status":"ok"}');
  });

  it('answers 503 once the main loop has not run for the stall threshold, and 200 again when it runs', async () => {
    const origin = await start(200);
    const answer = probeWhileBlocked(`${origin}/healthz`, 1000);
    expect(answer).toMatch(/^503 \{"code":"service_unavailable","message":"The event loop has not run for \d+ ms"/);
    // Running again: the heartbeat resumes, and within a few beats liveness is back.
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await fetch(`${origin}/healthz`)).status;
    }
    expect(status).toBe(200);
  });

  it('passes /readyz and everything else to the main thread’s listener', async () => {
    const origin = await start(60_000);
    const ready = await fetch(`${origin}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    expect((await fetch(`${origin}/v1/pets`)).status).toBe(404);
  });
});
