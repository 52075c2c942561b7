import { expect } from 'vitest';
import type { MainProcess } from '../main-process.js';

/** `n` API requests at once, a mix of lists, gets and creates; the answers in order. */
export async function fire(url: string, key: string, n: number): Promise<Response[]> {
  const headers = { Authorization: `Bearer ${key}` };
  return Promise.all(
    Array.from({ length: n }, (_, i) => {
      if (i % 3 === 0) return fetch(`${url}/v1/pets?limit=5`, { headers });
      if (i % 3 === 1) return fetch(`${url}/v1/pets/1`, { headers });
      return fetch(`${url}/v1/pets`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: `Fault ${i}`, categoryId: 1 }),
      });
    }),
  );
}

/** A dependency failure as clients must see it: 503 service_unavailable, Retry-After, rate-limit headers, no internals. */
export async function expectDependency503(res: Response, options: { rateLimitHeaders?: boolean } = {}): Promise<void> {
  const text = await res.text();
  const where = `${res.status} ${text.slice(0, 300)}`;
  expect(res.status, where).toBe(503);
  expect(res.headers.get('content-type'), where).toMatch(/^application\/json/);
  expect(res.headers.get('retry-after'), where).toMatch(/^[1-9][0-9]*$/);
  // The limiter decided before the dependency failed, so its headers are there (unless the limiter's store failed).
  if (options.rateLimitHeaders !== false) expect(res.headers.get('x-ratelimit-limit'), where).toMatch(/^[0-9]+$/);
  const body = JSON.parse(text) as { code: string; status: number; message: string };
  expect(body.code, where).toBe('service_unavailable');
  expect(body.status, where).toBe(503);
  expect(body.message, where).not.toMatch(/\bat \S+:\d+|node_modules|prisma|postgres|sqlite|redis|ECONN|SQLITE_/i);
}

/** The value of a Prometheus counter line whose labels contain `labels` (0 when absent). */
export async function metricValue(url: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) && line.includes(labels)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** No log line of the server carries a stack trace: dependency failures are logged in one concise line each. */
export function noStacks(server: MainProcess): void {
  for (const line of server.logs()) {
    const text = JSON.stringify(line);
    expect(text, text.slice(0, 500)).not.toMatch(/"stack"|\\n\s+at /);
    expect(text.length, text.slice(0, 500)).toBeLessThan(1000);
  }
}

/**
 * Creates pets from several clients at once, SIGKILLs the server once some were acknowledged, starts it again on the
 * same database, and checks every pet answered 201 is there. Returns how many were acknowledged.
 */
export async function killDuringCreates(
  server: MainProcess,
  restart: () => Promise<MainProcess>,
  key: string,
): Promise<{ server: MainProcess; acknowledged: number }> {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const acknowledged: number[] = [];
  let stop = false;
  const worker = async (w: number) => {
    for (let i = 0; !stop; i++) {
      try {
        const res = await fetch(`${server.url}/v1/pets`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: `Killed ${w}.${i}`, categoryId: 9 }),
        });
        if (res.status === 201) acknowledged.push(((await res.json()) as { id: number }).id);
      } catch {
        return; // the connection died with the server
      }
    }
  };
  const workers = Array.from({ length: 8 }, (_, w) => worker(w));
  while (acknowledged.length < 40) await new Promise((resolve) => setTimeout(resolve, 5));
  await server.kill();
  stop = true;
  await Promise.all(workers);
  const next = await restart();
  for (const id of acknowledged) {
    expect((await fetch(`${next.url}/v1/pets/${id}`, { headers })).status, `pet ${id} was acknowledged with 201`).toBe(
      200,
    );
  }
  return { server: next, acknowledged: acknowledged.length };
}

/** Short HTTP timeouts for the tests of slow and silent peers: headers within 1 s, a whole request within 2 s. */
export const SLOW_PEER_TIMEOUTS = { HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' };
