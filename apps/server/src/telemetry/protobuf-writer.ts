/**
 * The protobuf primitives the OTLP span encoding (otlp-proto.ts) writes with, into one growing buffer. Lengths are
 * canonical (the shortest varint), as the official writer makes them, so the same message gives the same bytes.
 */
import type { HrTime } from '@opentelemetry/api';

/** Wire types. */
export const VARINT = 0;
export const FIXED64 = 1;
const LEN = 2;
export const FIXED32 = 5;

const tag = (field: number, wire: number) => (field << 3) | wire;

/** Strings this long or longer are measured and written natively; shorter ones by a loop that also checks ASCII. */
const NATIVE_STRING = 48;

const INITIAL_SIZE = 64 * 1024;
const KEPT_SIZE = 1024 * 1024;

/** A hex digit's value by its character code (what a valid trace or span id holds). */
const HEX = new Uint8Array(128);
for (let c = 0; c < 10; c++) HEX[48 + c] = c;
for (let c = 0; c < 6; c++) HEX[97 + c] = HEX[65 + c] = 10 + c;

/**
 * A growing buffer with the protobuf primitives. A length-delimited message reserves one byte for its length and
 * moves its content when the length needs more (as the official writer does), so lengths stay canonical.
 */
export class Writer {
  buf = Buffer.allocUnsafe(INITIAL_SIZE);
  pos = 0;

  /**
   * The bytes written so far, copied out, and the writer emptied. A buffer grown past KEPT_SIZE (a batch of unusually
   * long attributes) is let go rather than held for the life of the process.
   */
  take(): Uint8Array {
    const bytes = Buffer.copyBytesFrom(this.buf, 0, this.pos);
    this.pos = 0;
    if (this.buf.length > KEPT_SIZE) this.buf = Buffer.allocUnsafe(INITIAL_SIZE);
    return bytes;
  }

  reserve(size: number): void {
    if (this.pos + size <= this.buf.length) return;
    let length = this.buf.length * 2;
    while (length < this.pos + size) length *= 2;
    const grown = Buffer.allocUnsafe(length);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  /** Starts a length-delimited field: its tag and one byte for the length; returns where the length goes. */
  open(field: number): number {
    this.reserve(6);
    if (field < 16) this.buf[this.pos++] = tag(field, LEN);
    else this.tag(field, LEN);
    return this.pos++;
  }

  close(at: number): void {
    const length = this.pos - at - 1;
    if (length < 128) {
      this.buf[at] = length;
      return;
    }
    const size = varintSize(length);
    this.reserve(size - 1);
    this.buf.copyWithin(at + size, at + 1, this.pos);
    this.pos += size - 1;
    let v = length;
    while (v > 127) {
      this.buf[at++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[at] = v;
  }

  tag(field: number, wire: number): void {
    this.varint(tag(field, wire));
  }

  /** A varint; negative and 64-bit values as the official writer encodes them (two's complement, ten bytes). */
  varint(value: number): void {
    this.reserve(10);
    const { buf } = this;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 127) {
        buf[this.pos++] = (v & 127) | 128;
        v >>>= 7;
      }
      buf[this.pos++] = v;
      return;
    }
    const abs = Math.abs(value);
    let low = abs >>> 0;
    let high = (abs / 4294967296) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 127) {
      buf[this.pos++] = (low & 127) | 128;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[this.pos++] = low & 127;
  }

  fixed32(value: number): void {
    this.reserve(4);
    this.buf.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  /** An HrTime ([seconds, nanoseconds]) as fixed64 nanoseconds, exact beyond 2^53 (split into 32-bit halves). */
  time(time: HrTime): void {
    const [seconds, nanos] = time;
    const lowSeconds = seconds & 0xffff;
    const highSeconds = (seconds / 65536) >>> 0;
    const fromLow = lowSeconds * 1e9;
    const fromHigh = highSeconds * 1e9;
    const low = (fromLow >>> 0) + ((((fromHigh & 0xffff) * 65536) >>> 0) + nanos);
    const high = Math.floor(fromLow / 4294967296) + ((fromHigh / 65536) >>> 0) + Math.floor(low / 4294967296);
    this.reserve(8);
    this.buf.writeUInt32LE(low >>> 0, this.pos);
    this.buf.writeUInt32LE(high >>> 0, this.pos + 4);
    this.pos += 8;
  }

  double(value: number): void {
    this.reserve(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /**
   * A length-delimited string field, UTF-8 (lone surrogates as U+FFFD, as TextEncoder writes them). A short one of a
   * field below 16 (a one-byte tag, as every OTLP string field) is written by a loop; any other natively.
   */
  string(field: number, text: string): void {
    const length = text.length;
    if (length < NATIVE_STRING && field < 16) {
      this.reserve(length + 2);
      const { buf } = this;
      const start = this.pos;
      let at = start + 2;
      for (let i = 0; i < length; i++) {
        const c = text.charCodeAt(i);
        if (c > 127) return this.nativeString(field, text);
        buf[at++] = c;
      }
      buf[start] = tag(field, LEN);
      buf[start + 1] = length;
      this.pos = at;
      return;
    }
    this.nativeString(field, text);
  }

  private nativeString(field: number, text: string): void {
    const bytes = Buffer.byteLength(text, 'utf8');
    this.tag(field, LEN);
    this.varint(bytes);
    this.reserve(bytes);
    this.pos += this.buf.write(text, this.pos, bytes, 'utf8');
  }

  /** A trace or span id (hex) as a bytes field. */
  id(field: number, hex: string): void {
    const size = hex.length >>> 1;
    this.tag(field, LEN);
    this.varint(size);
    this.reserve(size);
    const { buf } = this;
    for (let i = 0; i < hex.length; i += 2)
      buf[this.pos++] = (HEX[hex.charCodeAt(i) & 127]! << 4) | HEX[hex.charCodeAt(i + 1) & 127]!;
  }

  bytes(field: number, value: Uint8Array): void {
    this.tag(field, LEN);
    this.varint(value.length);
    this.reserve(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }
}

function varintSize(v: number): number {
  if (v < 128) return 1;
  if (v < 16384) return 2;
  if (v < 2097152) return 3;
  if (v < 268435456) return 4;
  return 5;
}
