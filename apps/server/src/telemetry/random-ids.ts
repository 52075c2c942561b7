import { randomFillSync } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace';

/** Random bytes drawn at once (a draw has a fixed cost of a few microseconds), and turned into hex at once. */
const DRAW_BYTES = 4096;
const HEX_BYTES = 256;

/**
 * Trace and span ids from the system's CSPRNG (the W3C recommends random ids; the SDK's RandomIdGenerator uses
 * Math.random), drawn DRAW_BYTES at a time and cut from a hex string of HEX_BYTES of them rather than converted one id
 * at a time. Ids are substrings of that string, so a kept id keeps it alive: it is small so that ids kept long (an
 * exemplar's) hold little. An all-zero id is invalid and never returned.
 */
export class RandomIds implements IdGenerator {
  private readonly bytes = Buffer.alloc(DRAW_BYTES);
  private drawn = DRAW_BYTES;
  private hex = '';
  private at = 0;

  /** `fill` writes random bytes into the buffer it is given (the CSPRNG; tests give another). */
  constructor(private readonly fill: (buffer: Buffer) => Buffer = randomFillSync) {}

  generateTraceId = (): string => this.next(32);
  generateSpanId = (): string => this.next(16);

  private next(chars: number): string {
    for (;;) {
      if (this.at + chars > this.hex.length) {
        if (this.drawn === DRAW_BYTES) {
          this.fill(this.bytes);
          this.drawn = 0;
        }
        this.hex = this.bytes.toString('hex', this.drawn, (this.drawn += HEX_BYTES));
        this.at = 0;
      }
      const id = this.hex.slice(this.at, (this.at += chars));
      if (id !== (chars === 32 ? ZERO_TRACE : ZERO_SPAN)) return id;
    }
  }
}

const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
