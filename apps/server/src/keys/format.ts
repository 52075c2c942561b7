import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Raw API key formats. New keys follow GitHub's token scheme so that a leaked-secret scanner can match them and a
 * mistyped or made-up key is refused without a database lookup: `ask_` + 43 random base62 characters (256 bits) + a
 * 6-character base62 CRC32 of those 43 characters. Keys issued before (`ask_` + 43 base64url characters, no
 * checksum) keep working; the lengths tell the two formats apart.
 */
export const KEY_PREFIX = 'ask_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 62^43 > 2^256: as much entropy as the legacy keys' 32 random bytes. */
export const KEY_ENTROPY_LENGTH = 43;
/** 62^6 > 2^32: a CRC32 always fits, zero-padded on the left. */
export const KEY_CHECKSUM_LENGTH = 6;

/** The pattern scanners can match for keys of the current format. */
export const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${KEY_ENTROPY_LENGTH + KEY_CHECKSUM_LENGTH}}$`);
/** Keys issued before the checksum (still accepted, always looked up). */
export const LEGACY_KEY_PATTERN = /^ask_[A-Za-z0-9_-]{43}$/;

/** Characters of the raw key kept in clear to tell keys apart in listings: `ask_` + 8. */
export const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 8;

/** CRC32 of `entropy` in base62 (`0-9A-Za-z`), left-padded with `0` to KEY_CHECKSUM_LENGTH characters (GitHub's). */
export function keyChecksum(entropy: string): string {
  let value = crc32(entropy);
  let out = '';
  for (let i = 0; i < KEY_CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62]! + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/** `count` uniformly random base62 characters (rejection sampling: bytes >= 248 would bias the first 8 symbols). */
function randomBase62(count: number): string {
  let out = '';
  while (out.length < count) {
    for (const byte of randomBytes(count + 16)) {
      if (byte < 248) out += BASE62[byte % 62]!;
      if (out.length === count) break;
    }
  }
  return out;
}

/** A new raw key in the current format. */
export function generateRawKey(): string {
  const entropy = randomBase62(KEY_ENTROPY_LENGTH);
  return KEY_PREFIX + entropy + keyChecksum(entropy);
}

/**
 * What a raw key is, decided from its text alone: `current` (the checksum matches), `legacy` (the old shape, which
 * carries no checksum), or `invalid` (anything else, a wrong checksum included: no lookup can find it).
 */
export function keyFormat(raw: string): 'current' | 'legacy' | 'invalid' {
  if (KEY_PATTERN.test(raw)) {
    const end = KEY_PREFIX.length + KEY_ENTROPY_LENGTH;
    return keyChecksum(raw.slice(KEY_PREFIX.length, end)) === raw.slice(end) ? 'current' : 'invalid';
  }
  return LEGACY_KEY_PATTERN.test(raw) ? 'legacy' : 'invalid';
}

/** True when the raw key may exist: worth hashing and looking up. */
export function looksLikeKey(raw: string): boolean {
  return keyFormat(raw) !== 'invalid';
}
