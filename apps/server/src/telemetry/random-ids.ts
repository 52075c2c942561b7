import { randomFillSync } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace';

/** Random bytes drawn at once: 256 make 16 trace ids or 32 span ids. */
const POOL_BYTES = 256;

/**
 * Trace and span ids from the system's CSPRNG (the W3C recommends random ids; the SDK's RandomIdGenerator uses
 * Math.random), cut from a hex string of POOL_BYTES random bytes rather than converted one id at a time. Ids are
 * substrings of that string, so a kept id keeps it alive: it is small so that ids kept long (an exemplar's) hold
 * little. An all-zero id is invalid and never returned.
 */
export class RandomIds implements IdGenerator {
  private readonly bytes = Buffer.alloc(POOL_BYTES);
  private hex = '';
  private at = 0;

  /** `fill` writes random bytes into the buffer it is given (the CSPRNG; tests give another). */
  constructor(private readonly fill: (buffer: Buffer) => Buffer = randomFillSync) {}

  generateTraceId = (): string => this.next(32);
  generateSpanId = (): string => this.next(16);

  private next(chars: number): string {
    for (;;) {
      if (this.at + chars > this.hex.length) {
        this.hex = this.fill(this.bytes).toString('hex');
        this.at = 0;
      }
      const id = this.hex.slice(this.at, (this.at += chars));
      if (!ZERO.test(id)) return id;
    }
  }
}

const ZERO = /^0+$/;
