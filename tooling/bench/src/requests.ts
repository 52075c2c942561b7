/** The requests the scenarios send (on the seeded catalogue of page.ts). */
import type { LoadRequest } from './load-spec.js';

export const auth = (key: string) => ({ authorization: `Bearer ${key}` });

/** The first page, as the baselines answer it (they take no key). */
export const CANNED: LoadRequest = { method: 'GET', path: '/v1/pets' };

export const list = (key: string, query = ''): LoadRequest => ({
  method: 'GET',
  path: `/v1/pets${query}`,
  headers: auth(key),
});

/** 40 different pages of 20 (cursors after pet 20, 40, … 800), sent in turn: reads that share less. */
export const distinctPages = (key: string): LoadRequest[] =>
  Array.from({ length: 40 }, (_, i) =>
    list(key, `?limit=20&cursor=${Buffer.from(`p1.${(i + 1) * 20}`, 'utf8').toString('base64url')}`),
  );

export const get = (key: string, id = 7): LoadRequest => ({
  method: 'GET',
  path: `/v1/pets/${id}`,
  headers: auth(key),
});

export const create = (key: string): LoadRequest => ({
  method: 'POST',
  path: '/v1/pets',
  headers: { ...auth(key), 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'Bench', categoryId: 3, status: 'available' }),
});
