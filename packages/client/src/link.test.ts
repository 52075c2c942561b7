import { describe, expect, it } from 'vitest';
import { findLink, parseLinkHeader } from './link.js';

describe('parseLinkHeader', () => {
  it('reads several links with quoted and bare parameters', () => {
    expect(
      parseLinkHeader('</v1/pets?cursor=abc>; rel="next", <https://h.example/v1/pets>; rel=first; title="a, b; c"'),
    ).toEqual([
      { uri: '/v1/pets?cursor=abc', rel: ['next'], params: { rel: 'next' } },
      { uri: 'https://h.example/v1/pets', rel: ['first'], params: { rel: 'first', title: 'a, b; c' } },
    ]);
  });

  it('splits and lower-cases relation types, keeps the first of a repeated parameter, unescapes quoted values', () => {
    const [link] = parseLinkHeader('<x>;REL="Prev  NEXT" ;rel=last; title="say \\"hi\\""');
    expect(link).toEqual({ uri: 'x', rel: ['prev', 'next'], params: { rel: 'Prev  NEXT', title: 'say "hi"' } });
  });

  it('skips malformed links and keeps the good ones', () => {
    expect(parseLinkHeader('garbage, rel="next", <a>; rel="next" junk, <b>; rel=next').map((l) => l.uri)).toEqual([
      'a',
      'b',
    ]);
    expect(parseLinkHeader('<unterminated; rel=next')).toEqual([]);
    expect(parseLinkHeader('')).toEqual([]);
    expect(parseLinkHeader(null)).toEqual([]);
  });
});

describe('findLink', () => {
  it('finds the first link of a relation type, case-insensitively', () => {
    const header =
      '</v1/pets>; rel="successor-version", </v1/pets?cursor=2>; rel="next", </v1/pets?cursor=3>; rel="next"';
    expect(findLink(header, 'next')).toBe('/v1/pets?cursor=2');
    expect(findLink(header, 'Successor-Version')).toBe('/v1/pets');
    expect(findLink(header, 'prev')).toBeUndefined();
    expect(findLink('<a>; rel="nextpage"', 'next')).toBeUndefined();
  });
});
