/**
 * The workload users produce (issue #14): many keys, list pages that differ (a random status or none, a limit of 10 to
 * 100, a random cursor half the time), and a share of creates, each with its own `Idempotency-Key` as the client
 * sends. Requests are drawn at random per request inside the load generator, so nearly every page is a different one.
 */
import { randomUUID } from 'node:crypto';
import type { LoadRequest, MixSpec } from './load-spec.js';

const STATUSES = [undefined, 'available', 'pending', 'sold'] as const;
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const between = (low: number, high: number) => low + Math.floor(Math.random() * (high - low + 1));

/** One request of the mix, drawn at random, on `key` when given (else one of the mix's keys, drawn too). */
export function mixedRequest(mix: MixSpec, key?: string): LoadRequest {
  if (mix.repeat) return { method: 'GET', path: '/v1/pets', headers: { authorization: `Bearer ${mix.keys[0]}` } };
  const authorization = `Bearer ${key ?? pick(mix.keys)}`;
  if (Math.random() * 100 < mix.createPercent) {
    const headers: Record<string, string> = { authorization, 'content-type': 'application/json' };
    if (mix.idempotencyKeys !== false) headers['idempotency-key'] = randomUUID();
    const status = pick(STATUSES);
    return {
      method: 'POST',
      path: '/v1/pets',
      headers,
      body: JSON.stringify({
        name: `mixed-${between(1, 1e9)}`,
        categoryId: between(1, 10),
        ...(status ? { status } : {}),
      }),
    };
  }
  const status = pick(STATUSES);
  let path = `/v1/pets?limit=${mix.limit ?? between(10, 100)}`;
  if (status) path += `&status=${status}`;
  if (Math.random() < 0.5)
    path += `&cursor=${Buffer.from(`p1.${between(1, mix.maxId)}`, 'utf8').toString('base64url')}`;
  return { method: 'GET', path, headers: { authorization } };
}
