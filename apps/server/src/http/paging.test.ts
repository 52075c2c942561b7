import { describe, expect, it } from 'vitest';
import { nextLink } from './paging.js';

describe('nextLink', () => {
  const general = (path: string, p: { limit: number; status?: string; cursor: string }) => {
    const q = new URLSearchParams({ limit: String(p.limit) });
    if (p.status !== undefined) q.set('status', p.status);
    q.set('cursor', p.cursor);
    return `<${path}?${q.toString()}>; rel="next"`;
  };
  it.each([
    { limit: 20, cursor: 'cDEuMjA' },
    { limit: 100, status: 'sold', cursor: 'cDEuOTAwNzE5OTI1NDc0MDk5MQ' },
  ])('writes what URLSearchParams writes for a real page %o', (p) => {
    expect(nextLink('/v1/pets', p)).toBe(general('/v1/pets', p));
  });
  it.each([
    { limit: 1, status: 'a b&c=d', cursor: 'x_y-z' },
    { limit: 5, cursor: 'a+b/c=' },
  ])('keeps any other value intact through the URL %o', (p) => {
    const link = nextLink('/v1/pets', p);
    const url = new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!, 'http://host');
    expect(url.pathname).toBe('/v1/pets');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      limit: String(p.limit),
      ...(p.status ? { status: p.status } : {}),
      cursor: p.cursor,
    });
  });
});
