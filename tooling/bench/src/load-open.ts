/**
 * Open loop: a fixed arrival rate (wrk2 style). Request n is due at start + n/rate and its latency is measured from
 * when it was due, so a stall is charged to every request it delays (no coordinated omission): a request due while
 * every connection waits for an answer waits in a queue here, and that wait is counted. Bounded keep-alive connections,
 * opened as needed (or a new connection per request), over raw sockets with requests encoded once (raw-http.ts); with
 * `graceSec`, answers still missing that long after the last request was sent are given up and counted as errors. Every
 * error is also counted by what became of its request (`unanswered`): a connection the server closed or that failed, an
 * answer not read, no answer in time, or never sent at all (still queued here: the generator's backlog, which the
 * server never saw); with `warmupSec`, the first requests are sent but not counted. `sendLagP99` is the generator's own
 * lateness: how long after its due time a request was taken up (queued or written), which is this process's CPU, not
 * the server's.
 */
import { performance } from 'node:perf_hooks';
import { Latencies, loadResult } from './latencies.js';
import type { LoadResult, LoadSpec, Unanswered } from './load-spec.js';
import { mixedRequest } from './mix.js';
import { encodeRequest, RawConnection, type RawFailure } from './raw-http.js';
import { percentile } from './stats.js';

/** A mix of reads is drawn about this many times up front and sent in turn: varied pages, each made once. */
const POOL = 16_384;

/**
 * The requests' bytes: `next()` gives the one to send now. A mix with creates is drawn per request (fresh keys). A
 * mix of reads takes its keys in turn, each as often and evenly spaced: drawn at random, a key that came up four
 * times in the pool where the mean is under two would send at twice the crowd's rate and pass its plan's limit alone.
 */
function requestBytes(spec: LoadSpec, host: string, keepAlive: boolean): () => Buffer {
  const mix = spec.mix;
  if (mix && mix.createPercent > 0) return () => encodeRequest(host, mixedRequest(mix), keepAlive);
  const size = mix ? mix.keys.length * Math.max(1, Math.round(POOL / mix.keys.length)) : 0;
  const pool = mix
    ? Array.from({ length: size }, (_, i) =>
        encodeRequest(host, mixedRequest(mix, mix.keys[i % mix.keys.length]), keepAlive),
      )
    : spec.requests.map((r) => encodeRequest(host, r, keepAlive));
  let i = 0;
  return () => pool[i++ % pool.length]!;
}

interface Due {
  at: number;
  counts: boolean;
}

export function open(spec: LoadSpec): Promise<LoadResult> {
  return new OpenLoop(spec).run();
}

class OpenLoop {
  readonly #rate: number;
  readonly #total: number;
  readonly #warmup: number;
  readonly #host: string;
  readonly #port: number;
  readonly #keepAlive: boolean;
  readonly #next: () => Buffer;
  readonly #lat = new Latencies();
  readonly #lag = new Latencies();
  readonly #codes: Record<string, number> = {};
  readonly #idle: RawConnection[] = [];
  /** Requests due while every connection waited for an answer, oldest first from #queued. */
  readonly #queue: Due[] = [];
  #queued = 0;
  /** Every open connection and the request it waits for the answer of (undefined: idle). */
  readonly #open = new Map<RawConnection, Due | undefined>();
  #errors = 0;
  readonly #unanswered: Unanswered = { closed: 0, error: 0, unparsed: 0, late: 0, unsent: 0 };
  #done = 0;
  #uncounted = 0;
  /** 2xx answers received while requests were due, after the warm-up (dueRps): #countWhileDue. */
  #okWhileDue = 0;
  #start = 0;
  #resolve: ((r: LoadResult) => void) | undefined;

  constructor(private readonly spec: LoadSpec) {
    this.#rate = spec.rate ?? 1000;
    this.#total = Math.round(this.#rate * spec.durationSec);
    this.#warmup = Math.min(this.#total, Math.round(this.#rate * (spec.warmupSec ?? 0)));
    const url = new URL(spec.origin);
    [this.#host, this.#port] = [url.hostname, Number(url.port)];
    this.#keepAlive = spec.keepAlive !== false;
    this.#next = requestBytes(spec, url.host, this.#keepAlive);
  }

  async run(): Promise<LoadResult> {
    const { startAt } = this.spec;
    if (startAt !== undefined) await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
    return new Promise((resolve) => {
      this.#resolve = resolve;
      this.#start = performance.now();
      let sent = 0;
      const tick = () => {
        const due = Math.min(this.#total, Math.floor(((performance.now() - this.#start) * this.#rate) / 1000) + 1);
        while (sent < due) this.#fire(sent++);
        if (sent < this.#total) setTimeout(tick, 1);
        else if (this.spec.graceSec !== undefined) setTimeout(() => this.#settle(), this.spec.graceSec * 1000).unref();
      };
      tick();
    });
  }

  #fire(n: number): void {
    const due = { at: this.#start + (n * 1000) / this.#rate, counts: n >= this.#warmup };
    if (due.counts) this.#lag.add(performance.now() - due.at);
    this.#dispatch(due);
  }

  /** Sends `due` on an idle connection, a new one while under the bound, or queues it for the next one free. */
  #dispatch(due: Due): void {
    let c = this.#idle.pop();
    while (c?.dead) {
      this.#open.delete(c);
      c = this.#idle.pop();
    }
    if (c === undefined && this.#open.size >= this.spec.connections) return void this.#queue.push(due);
    c ??= this.#connection();
    this.#open.set(c, due);
    c.send(this.#next());
  }

  #connection(): RawConnection {
    const c: RawConnection = new RawConnection(
      this.#port,
      this.#host,
      (status) => {
        this.#finish(this.#open.get(c)!, status);
        if (!this.#keepAlive) c.destroy();
        this.#released(c);
      },
      (why) => {
        this.#finish(this.#open.get(c)!, undefined, why);
        this.#released(c);
      },
    );
    return c;
  }

  #released(c: RawConnection): void {
    if (c.dead) this.#open.delete(c);
    else {
      this.#open.set(c, undefined);
      this.#idle.push(c);
    }
    if (this.#resolve === undefined || this.#queued === this.#queue.length) return;
    const waiting = this.#queue[this.#queued]!;
    this.#queue[this.#queued++] = undefined as unknown as Due;
    this.#dispatch(waiting);
  }

  #finish(due: Due, status: number | undefined, why?: RawFailure): void {
    if (this.#resolve === undefined) return;
    const ok = status !== undefined && status >= 200 && status < 300;
    const now = ok ? performance.now() : 0;
    if (due.counts && status === undefined) {
      this.#errors++;
      this.#unanswered[why!]++;
    } else if (due.counts && status !== undefined) {
      this.#codes[status] = (this.#codes[status] ?? 0) + 1;
      if (ok) this.#lat.add(now - due.at);
    }
    if (ok) this.#countWhileDue(now);
    if (due.counts) this.#done++;
    else this.#uncounted++;
    if (this.#done + this.#uncounted === this.#total) this.#settle();
  }

  /** A 2xx answer, of any request, received at `now`: counted between the warm-up's end and the last due time. */
  #countWhileDue(now: number): void {
    const since = now - this.#start;
    if (since >= (this.spec.warmupSec ?? 0) * 1000 && since <= this.spec.durationSec * 1000) this.#okWhileDue++;
  }

  #settle(): void {
    const resolve = this.#resolve;
    if (resolve === undefined) return;
    this.#resolve = undefined;
    // Given up: the requests still queued here were never sent; the rest were sent and not answered in time.
    const missing = this.#total - this.#warmup - this.#done;
    let unsent = 0;
    for (let i = this.#queued; i < this.#queue.length; i++) if (this.#queue[i]!.counts) unsent++;
    this.#unanswered.unsent = unsent;
    this.#unanswered.late = missing - unsent;
    this.#errors += missing;
    for (const c of this.#open.keys()) c.destroy();
    const measuredFrom = this.#start + (this.spec.warmupSec ?? 0) * 1000;
    const result = loadResult(this.#lat, this.#codes, this.#errors, (performance.now() - measuredFrom) / 1000);
    const dueSec = this.spec.durationSec - (this.spec.warmupSec ?? 0);
    const dueRps = dueSec > 0 ? this.#okWhileDue / dueSec : NaN;
    resolve({ ...result, dueRps, sendLagP99: percentile(this.#lag.values, 99), unanswered: this.#unanswered });
  }
}
