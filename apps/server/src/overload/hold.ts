import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** How often held answers are looked at: a held answer leaves at most this late. */
const TICK_MS = 50;

interface Held {
  readonly res: ServerResponse;
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  /** A string: node:http writes it in one write with the head, where a Buffer would go out as a second chunk. */
  readonly body: string;
}

export interface HoldSettings {
  /** How long a refusal is held before it is sent (ms); 0 sends every refusal at once. */
  readonly ms: number;
  /** Refusals held at once at most; past it a refusal is sent at once. */
  readonly maxSockets: number;
}

/**
 * A tarpit for the refusals of a key that is already over its limits (key-door.ts): the answer is held for a bounded
 * time before it is sent. A client that sends again as soon as it is answered (a closed loop, a retry storm) then
 * costs the process one cheap refusal per connection and hold, instead of refusals as fast as the CPU can make them.
 * Held answers are not requests in flight: they hold a socket and a queue entry, no slot and no work. Past
 * `maxSockets` held at once, a refusal is sent at once, so the hold never becomes the process's own memory problem. One
 * timer serves them all.
 */
export class RefusalHold {
  /** Held answers by the tick they are due at (a tick is TICK_MS): a timing wheel of a few buckets. */
  readonly #due = new Map<number, Held[]>();
  #held = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly settings: HoldSettings) {}

  /** Refusals held now. */
  get held(): number {
    return this.#held;
  }

  /**
   * Sends the refusal after the hold (at most `maxMs`), or at once when holding is off or full. The hold is drawn
   * from its second half at random: a herd of refusals made at once (a closed loop's connections) comes back spread
   * out, so its next requests do not arrive in one burst that makes the loop late for everyone else.
   */
  answer(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body: string, maxMs = Infinity) {
    const ms = Math.min(this.settings.ms, maxMs);
    if (ms <= 0 || this.#held >= this.settings.maxSockets) {
      send({ res, status, headers, body });
      return;
    }
    const tick = Math.floor((performance.now() + ms * (0.5 + 0.5 * Math.random())) / TICK_MS);
    const bucket = this.#due.get(tick);
    if (bucket === undefined) this.#due.set(tick, [{ res, status, headers, body }]);
    else bucket.push({ res, status, headers, body });
    this.#held++;
    this.#timer ??= setInterval(() => this.#flush(performance.now()), TICK_MS).unref();
  }

  /** Sends every held refusal now (the server is stopping). */
  release(): void {
    this.#flush(Infinity);
  }

  #flush(now: number): void {
    const current = now / TICK_MS;
    for (const [tick, bucket] of this.#due) {
      if (tick > current) continue;
      this.#due.delete(tick);
      this.#held -= bucket.length;
      for (const held of bucket) send(held);
    }
    if (this.#held === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}

/** Writes a refusal, unless its client went away while it was held. */
function send(held: Held): void {
  const { res } = held;
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(held.status, held.headers);
  res.end(held.body);
}
