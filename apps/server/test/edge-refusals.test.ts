import { describe, expect, it } from 'vitest';
import { eventually } from './helpers.js';
import { useMainOnSqlite } from './main-process.js';
import { errorResponse, exchange, statusesOf } from './raw-http.js';

/** The value of `animal_store_http_protocol_errors_total` for a status, from the server's /metrics. */
async function protocolErrors(url: string, status: number): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`animal_store_http_protocol_errors_total{http_response_status_code="${status}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** The head of a create with the key, declaring `length` bytes of JSON body. */
const createHead = (key: string, length: number) =>
  `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
  `Content-Length: ${length}\r\n\r\n`;

/**
 * #24 items 15, 16 and 19 (the declared oversized body), against the built server: what Node's HTTP layer would
 * refuse on its own is a JSON Error, counted and logged; one request gets one answer.
 */
describe('refusals at the HTTP edge', () => {
  const ctx = useMainOnSqlite('edge', {
    HTTP_HEADERS_TIMEOUT_MS: '1000',
    HTTP_REQUEST_TIMEOUT_MS: '1500',
  });

  it('answers HTTP/1.1 without Host, an unknown Expect and CONNECT with a 400 Error body, counted and logged (item 15)', async () => {
    const { server } = ctx;
    const before = await protocolErrors(server.url, 400);
    const cases = [
      ['GET /v1/pets HTTP/1.1\r\n\r\n', 'Host', 'missing_host'],
      ['GET /v1/pets HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n', 'Expect', 'unsupported_expectation'],
      ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 'CONNECT', 'connect'],
    ] as const;
    for (const [request, named, reason] of cases) {
      const raw = await exchange(server.port, request);
      expect(statusesOf(raw), request).toEqual([400]);
      const res = errorResponse(raw);
      expect(res.contentType, request).toMatch(/^application\/json/);
      expect(res.body, request).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(res.body.message, request).toContain(named);
      // Logged (the line reaches the process's stdout a moment after the answer).
      await eventually(() => server.logs().some((line) => line.reason === reason && line.status === 400));
    }
    expect(await protocolErrors(server.url, 400)).toBe(before + cases.length);
    // HTTP/1.0 has no Host requirement, and `Expect: 100-continue` is still honoured.
    expect(statusesOf(await exchange(server.port, 'GET /healthz HTTP/1.0\r\n\r\n'))).toEqual([200]);
    const continued = 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n';
    expect(statusesOf(await exchange(server.port, continued))).toEqual([100, 200]);
  });

  it('sends a 401, 404 or 415 given while the body is arriving, and nothing after it when the body stops (item 16)', async () => {
    const { server, key } = ctx;
    const partial = (path: string, headers: string) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}Content-Length: 100\r\n\r\n{"name":`;
    const cases = [
      [partial('/v1/pets', 'Content-Type: application/json\r\n'), 401],
      [partial('/v1/nope', `Authorization: Bearer ${key}\r\nContent-Type: application/json\r\n`), 404],
      [partial('/v1/pets', `Authorization: Bearer ${key}\r\nContent-Type: text/plain\r\n`), 415],
    ] as const;
    const before = await protocolErrors(server.url, 408);
    // The connection stays open until the request timeout (the rest of the body may still come), then closes.
    const answers = await Promise.all(cases.map(([request]) => exchange(server.port, request)));
    answers.forEach((raw, i) => {
      expect(statusesOf(raw), cases[i]![0]).toEqual([cases[i]![1]]);
      expect(raw).not.toContain('request_timeout');
    });
    expect(await protocolErrors(server.url, 408)).toBe(before);
  });

  it('still answers 408 a body that stops arriving before any answer', async () => {
    const { server, key } = ctx;
    const raw = await exchange(server.port, createHead(key, 100) + '{"name":');
    expect(statusesOf(raw)).toEqual([408]);
    expect(errorResponse(raw).body).toMatchObject({ code: 'request_timeout', status: 408 });
  });

  it('answers a pipelined create, then refuses the malformed request sent after it (item 19)', async () => {
    const { server, key } = ctx;
    const body = JSON.stringify({ name: 'Piped', categoryId: 1 });
    const raw = await exchange(
      server.port,
      `${createHead(key, Buffer.byteLength(body))}${body}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n`,
    );
    expect(statusesOf(raw)).toEqual([201, 200, 400]);
    const id = Number(/\r\nLocation: \/v1\/pets\/(\d+)\r\n/i.exec(raw)?.[1]);
    const list = await fetch(`${server.url}/v1/pets?limit=100`, { headers: { Authorization: `Bearer ${key}` } });
    expect(((await list.json()) as { id: number; name: string }[]).find((pet) => pet.id === id)?.name).toBe('Piped');
  });

  it('refuses a declared body over 64 KiB with 413 before it arrives, and closes the connection (item 19)', async () => {
    const { server, key } = ctx;
    const raw = await exchange(server.port, createHead(key, 10_000_000) + '{"name":');
    expect(statusesOf(raw)).toEqual([413]);
    expect(raw).toMatch(/\r\nConnection: close\r\n/i);
    expect(errorResponse(raw).body).toMatchObject({ code: 'payload_too_large', status: 413 });
  });
});
