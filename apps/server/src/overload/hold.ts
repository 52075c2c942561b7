import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** How often held answers are looked at: a held answer leaves at most this late. */
const TICK_MS = 50;

interface Held {
  readonly res: ServerResponse;
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Buffer | string;
  readonly due: number;
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
 * timer serves the whole queue (every answer is held equally long, so the queue is in order of its due times).
 */
export class RefusalHold {
  #queue: Held[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly settings: HoldSettings) {}

  /** Refusals held now. */
  get held(): number {
    return this.#queue.length - this.#head;
  }

  /** Sends the refusal after the hold (at most `maxMs`), or at once when holding is off or full. */
  answer(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body: Buffer | string, maxMs = Infinity) {
    const ms = Math.min(this.settings.ms, maxMs);
    if (ms <= 0 || this.held >= this.settings.maxSockets) {
      send({ res, status, headers, body, due: 0 });
      return;
    }
    this.#queue.push({ res, status, headers, body, due: performance.now() + ms });
    this.#timer ??= setInterval(() => this.#flush(performance.now()), TICK_MS).unref();
  }

  /** Sends every held refusal now (the server is stopping). */
  release(): void {
    this.#flush(Infinity);
  }

  #flush(now: number): void {
    const queue = this.#queue;
    while (this.#head < queue.length && queue[this.#head]!.due <= now) send(queue[this.#head++]!);
    if (this.#head === queue.length) {
      this.#queue = [];
      this.#head = 0;
      clearInterval(this.#timer);
      this.#timer = undefined;
    } else if (this.#head > 1024 && this.#head * 2 > queue.length) {
      this.#queue = queue.slice(this.#head);
      this.#head = 0;
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
