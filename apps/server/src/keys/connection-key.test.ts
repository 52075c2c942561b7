import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { connectionKeyHash, sameText } from './connection-key.js';
import { generateRawKey } from './format.js';
import { keyHashOf } from './resolver.js';

const on = (socket: object) => ({ socket }) as unknown as Pick<IncomingMessage, 'socket'>;

describe('connectionKeyHash', () => {
  it("answers each key's own hash on one connection, whichever key came before", () => {
    const connection = {};
    const [a, b] = [generateRawKey(), generateRawKey()];
    expect(connectionKeyHash(on(connection), a)).toBe(keyHashOf(a));
    expect(connectionKeyHash(on(connection), a)).toBe(keyHashOf(a));
    expect(connectionKeyHash(on(connection), b)).toBe(keyHashOf(b));
    expect(connectionKeyHash(on(connection), 'ask_not-a-key')).toBeUndefined();
    expect(connectionKeyHash(on(connection), a)).toBe(keyHashOf(a));
    // Another connection's last key is not this one's.
    expect(connectionKeyHash(on({}), b)).toBe(keyHashOf(b));
    expect(connectionKeyHash({ socket: null } as unknown as Pick<IncomingMessage, 'socket'>, a)).toBe(keyHashOf(a));
  });

  it('adds nothing to the connection object (its shape stays the one node:http gives every socket)', () => {
    const connection = {};
    connectionKeyHash(on(connection), generateRawKey());
    expect(Reflect.ownKeys(connection)).toEqual([]);
  });
});

describe('sameText', () => {
  it('tells equal texts from different ones of any length', () => {
    expect(sameText('ask_abc', 'ask_abc')).toBe(true);
    expect(sameText('ask_abc', 'ask_abd')).toBe(false);
    expect(sameText('xsk_abc', 'ask_abc')).toBe(false);
    expect(sameText('ask_ab', 'ask_abc')).toBe(false);
    expect(sameText('', '')).toBe(true);
  });
});
