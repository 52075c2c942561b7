import { describe, expect, it } from 'vitest';
import { generateRawKey, KEY_PATTERN, keyChecksum, keyFormat, looksLikeKey } from './format.js';

const BASE62 = /^[0-9A-Za-z]+$/;

describe('key format', () => {
  it('computes the checksum as GitHub does (its published example token)', () => {
    // 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: 30 characters of entropy, then their CRC32 in base62.
    expect(keyChecksum('zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ')).toBe('0mLq17');
  });

  it('issues ask_ + 43 base62 characters + a 6-character checksum, each key different', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const raw = generateRawKey();
      expect(raw).toMatch(KEY_PATTERN);
      expect(raw).toHaveLength(4 + 43 + 6);
      expect(raw.slice(4)).toMatch(BASE62);
      expect(keyFormat(raw)).toBe('current');
      keys.add(raw);
    }
    expect(keys.size).toBe(200);
  });

  it('uses every base62 symbol about evenly (no modulo bias)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 400; i++)
      for (const ch of generateRawKey().slice(4, 47)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 17,200 symbols: about 277 each; a biased sampler gives the first 8 symbols ~12 % more.
    for (const n of counts.values()) expect(n).toBeGreaterThan(180);
    for (const n of counts.values()) expect(n).toBeLessThan(380);
  });

  it('refuses any single mistyped character, a swapped pair, and a made-up key', () => {
    const raw = generateRawKey();
    for (let i = 4; i < raw.length; i++) {
      const typo = raw.slice(0, i) + (raw[i] === 'a' ? 'b' : 'a') + raw.slice(i + 1);
      expect(keyFormat(typo)).toBe('invalid');
    }
    const swapAt = [...raw].findIndex((ch, i) => i >= 4 && raw[i + 1] !== undefined && raw[i + 1] !== ch);
    const swapped = raw.slice(0, swapAt) + raw[swapAt + 1] + raw[swapAt] + raw.slice(swapAt + 2);
    expect(keyFormat(swapped)).toBe('invalid');
    expect(looksLikeKey(`ask_${'A'.repeat(49)}`)).toBe(false);
  });

  it('keeps accepting legacy keys (ask_ + 43 base64url) and refuses other shapes', () => {
    expect(keyFormat(`ask_${'a-_Z'.repeat(10)}xyz`)).toBe('legacy');
    for (const bad of [
      '',
      'ask_',
      `ask_${'a'.repeat(42)}`,
      `ask_${'a'.repeat(44)}`,
      `sk_${'a'.repeat(44)}`,
      `ask_${'a'.repeat(42)}!`,
      `ask_${'a'.repeat(50)}`,
    ]) {
      expect(keyFormat(bad)).toBe('invalid');
    }
  });
});
