import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_ROOT } from '../src/config/server-root.js';
import { generateRawKey } from '../src/keys/format.js';
import { createLogger } from '../src/logger.js';
import { auth, eventually, withTestServer } from './helpers.js';
import { refusesConnections } from './listen.js';

const MAIN = join(SERVER_ROOT, 'dist/main.js');
const KEYS = join(SERVER_ROOT, 'dist/cli/keys.js');
const dir = mkdtempSync(join(tmpdir(), 'ops-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('logs', () => {
  it('are JSON lines carrying the request id, never the key or the Authorization header', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    await withTestServer('sqlite', { logger: createLogger('info', sink) }, async (server) => {
      const key = await server.key();
      await fetch(`${server.url}/v1/pets`, { headers: auth(key, { 'X-Request-Id': 'req-abc-123' }) });
      await fetch(`${server.url}/v1/pets`, {
        headers: { Authorization: 'Bearer ask_wrongwrongwrongwrongwrongwrongwrongwrongwro' },
      });
      await eventually(() => lines.filter((l) => l.includes('"msg":"request"')).length >= 2);
      const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const mine = records.filter((r) => r.reqId === 'req-abc-123');
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ method: 'GET', route: '/v1/pets', status: 200, msg: 'request' });
      expect(records.every((r) => typeof r.reqId === 'string')).toBe(true);
      const all = lines.join('\n');
      expect(all).not.toContain(key);
      expect(all).not.toContain('wrongwrong');
      expect(all.toLowerCase()).not.toContain('authorization');
    });
  });
});

describe('metrics', () => {
  it('count requests by route pattern and status, behind METRICS_TOKEN when set', async () => {
    const token = 'metrics-token-0123456789';
    await withTestServer('postgresql', { metricsToken: token }, async (server) => {
      const key = await server.key();
      await fetch(`${server.url}/v1/pets/12345`, { headers: auth(key) });
      expect((await fetch(`${server.url}/v1/pets?limit=5`, { headers: auth(key) })).status).toBe(200);
      expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
      const res = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(text).toMatch(
        /http_server_request_duration_seconds_count\{http_request_method="GET",http_response_status_code="404",http_route="\/v1\/pets\/:petId"\} 1\n/,
      );
      expect(text).toMatch(
        /http_server_request_duration_seconds_bucket\{le="0.005",http_request_method="GET",http_response_status_code="200",http_route="\/v1\/pets"\} \d+\n/,
      );
      expect(text).toMatch(
        /animal_store_operation_duration_seconds_count\{operation="getPet",plan="free",outcome="client_error"\} 1\n/,
      );
      expect(text).toMatch(
        /animal_store_operation_duration_seconds_count\{operation="listPets",plan="free",outcome="success"\} 1\n/,
      );
      expect(text).toMatch(
        /db_client_connection_count\{db_client_connection_pool_name="main",db_client_connection_state="idle"\} \d+/,
      );
      expect(text).toMatch(/db_client_connection_pending_requests\{db_client_connection_pool_name="main"\} 0\n/);
      // The get and the list above were a query each.
      expect(text).toMatch(/animal_store_pets_reads_total\{query="own"\} 2\n/);
      expect(text).toMatch(/animal_store_pets_reads_total\{query="shared"\} 0\n/);
      // Prometheus asks for OpenMetrics: counters are then families without _total, and the text ends with # EOF.
      const openMetrics = await fetch(`${server.url}/metrics`, {
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/openmetrics-text;version=1.0.0' },
      });
      expect(openMetrics.headers.get('content-type')).toBe(
        'application/openmetrics-text; version=1.0.0; charset=utf-8',
      );
      const om = await openMetrics.text();
      expect(om).toContain('# TYPE animal_store_pets_reads counter\n');
      expect(om.endsWith('# EOF\n')).toBe(true);
    });
  });

  it('count key lookups: from the cache, looked up, or refused as malformed without one', async () => {
    await withTestServer('sqlite', {}, async (server) => {
      const key = await server.key();
      const typo = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
      const unknown = generateRawKey(); // well-formed: looked up once, then its absence is cached
      for (const bearer of [key, key, key, typo, 'nope', unknown, unknown])
        await fetch(`${server.url}/v1/pets?limit=3`, { headers: auth(bearer) });
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const count = (result: string) =>
        Number(new RegExp(`animal_store_api_key_lookups_total\\{result="${result}"\\} (\\d+)\n`).exec(text)?.[1]);
      expect([count('miss'), count('hit'), count('malformed')]).toEqual([2, 3, 2]);
    });
  });

  it('count the SQLite page cache hits and misses', async () => {
    await withTestServer('sqlite', {}, async (server) => {
      const key = await server.key();
      // Read on its first two askings (it is kept from the second on), answered from memory on the next two.
      for (let i = 0; i < 4; i++) await fetch(`${server.url}/v1/pets?limit=7`, { headers: auth(key) });
      const text = await (await fetch(`${server.url}/metrics`)).text();
      expect(text).toMatch(/animal_store_pets_page_cache_lookups_total\{result="hit"\} 2\n/);
      expect(text).toMatch(/animal_store_pets_page_cache_lookups_total\{result="miss"\} 2\n/);
      expect(text).not.toMatch(/animal_store_pets_reads_total\{/);
      expect(text).not.toMatch(/db_client_connection_count\{/);
    });
  });
});

function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 15_000);
    child.stdout.on('data', () => {
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
  });
  return { child, exited, listening, output: () => output };
}

describe('readiness', () => {
  it('answers /readyz 503 once shutdown began, while /healthz still answers', async () => {
    let stopping = false;
    await withTestServer('sqlite', { isShuttingDown: () => stopping }, async (server) => {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      stopping = true;
      const res = await fetch(`${server.url}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    });
  });
});

describe('PostgreSQL connections lost while idle', () => {
  it('are replaced by the pool without crashing the process; the next requests are answered', async () => {
    await withTestServer('postgresql', {}, async (server, database) => {
      const key = await server.key();
      for (let i = 0; i < 3; i++)
        expect((await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);
      const admin = new pg.Client({ connectionString: (database.target as { url: string }).url });
      await admin.connect();
      const { rowCount } = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      await admin.end();
      expect(rowCount).toBeGreaterThan(0);
      await eventually(() => server.db.poolStats?.().total === 0); // the pool dropped the terminated connections
      for (let i = 0; i < 3; i++)
        expect((await fetch(`${server.url}/v1/pets`, { headers: auth(key) })).status).toBe(200);
    });
  });
});

describe('graceful shutdown', () => {
  it('on SIGTERM stops accepting, finishes the request in flight, and exits 0', async () => {
    // No drain period: this test is about what happens once the server stops accepting (the drain has its own test).
    const env = { DATABASE_URL: `file:${join(dir, 'shutdown.db')}`, PORT: '0', SHUTDOWN_DRAIN_MS: '0' };
    const created = spawnSync(process.execPath, [KEYS, 'create', '--plan', 'free'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
    });
    const key = created.stdout.trimEnd().split('\n').at(-1)!;
    const server = startMain(env);
    const port = await server.listening;

    // A request whose body is still arriving when the signal comes.
    const body = JSON.stringify({ name: 'Late', categoryId: 1 });
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let response = '';
    socket.on('data', (d: Buffer) => (response += d.toString()));
    socket.write(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 500)); // the server has the request's headers: it is in flight
    // A keep-alive client whose request is arriving when the signal comes: once stopping, its connection must close after
    // the answer, not stay open (and keep the process alive) until the shutdown deadline.
    const keepAlive = connect(port, '127.0.0.1');
    await new Promise((r) => keepAlive.once('connect', r));
    let keepAliveResponse = '';
    keepAlive.on('data', (d: Buffer) => (keepAliveResponse += d.toString()));
    const keepAliveClosed = new Promise((r) => keepAlive.once('close', r));
    keepAlive.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    await new Promise((r) => setTimeout(r, 200));
    server.child.kill('SIGTERM');
    // No longer accepting: new connections are refused once the signal is handled (polled, bounded, so a slow machine
    // does not make this flaky), while the requests in flight are still open.
    expect(await refusesConnections(`http://127.0.0.1:${port}/healthz`)).toBe(true);
    keepAlive.write('\r\n');
    await keepAliveClosed;
    expect(keepAliveResponse).toMatch(/^HTTP\/1\.1 200 /);
    expect(keepAliveResponse).toMatch(/\r\nConnection: close\r\n/i);
    socket.write(body.slice(5));
    await new Promise((r) => socket.once('close', r));
    expect(response).toMatch(/^HTTP\/1\.1 201 /);
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('shutting down');
  });
});

describe('start-up', () => {
  it('retries an unreachable database for a bounded time, then exits non-zero naming DATABASE_URL', async () => {
    const server = startMain({
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/none',
      DATABASE_STARTUP_TIMEOUT_MS: '2500',
      PORT: '0',
    });
    const code = await server.exited;
    expect(code).not.toBe(0);
    expect(server.output()).toContain('retrying');
    expect(server.output()).toContain('DATABASE_URL');
  });
});
