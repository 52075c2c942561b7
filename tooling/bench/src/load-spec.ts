/** What the parent asks of the load generator (load.ts) and what it answers: messages over IPC. */

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** The workload users produce, drawn per request (mix.ts). */
export interface MixSpec {
  /** Raw API keys; each request uses one at random. */
  keys: string[];
  /** Share of creates, 0 to 100. */
  createPercent: number;
  /** Cursors point after a random id from 1 to this. */
  maxId: number;
  /** Creates carry a fresh Idempotency-Key (as the client sends); default true. */
  idempotencyKeys?: boolean;
  /** Every list asks for this many pets (10 to 100 at random by default). */
  limit?: number;
  /** Every request is the same list URL with the first key (today's headline, for comparison). */
  repeat?: boolean;
}

export interface LoadSpec {
  mode: 'closed' | 'open';
  /** Origin, e.g. http://127.0.0.1:3000 (127.0.0.1 only). */
  origin: string;
  /** Sent in turn (each connection cycles through them). */
  requests: LoadRequest[];
  connections: number;
  durationSec: number;
  /** Requests per second (open mode). */
  rate?: number;
  /** Instead of `requests`, each request drawn at random from this mix. */
  mix?: MixSpec;
  /** Open mode: false opens a new connection for every request (as a kubelet probe does); default true. */
  keepAlive?: boolean;
  /**
   * Open mode: how long after sending its last request the run waits for answers (a client's patience); what is not
   * answered by then (sent or still queued) counts in `errors`, and in `unanswered` as late or unsent. Unset: it waits
   * for every answer.
   */
  graceSec?: number;
  /** Open mode: when to send the first request (epoch ms), so generators started together begin together. */
  startAt?: number;
  /**
   * Open mode: requests due in the first this many seconds are sent (opening connections, warming both sides) but not
   * counted; the result covers the rest of the run.
   */
  warmupSec?: number;
}

export interface LoadResult {
  ok: number;
  non2xx: number;
  errors: number;
  elapsedSec: number;
  /** 2xx answers per second, over the time until the last answer. */
  rps: number;
  /**
   * Open mode: 2xx answers per second received while requests were due (after the warm-up): the rate served under the
   * offered load, without the tail in which a backlog drains, or held refusals are waited for, after the last send.
   */
  dueRps?: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  statusCodes: Record<string, number>;
  /** Open mode: p99 of how late the generator itself sent a request after it was due (ms): above a few ms, it lagged. */
  sendLagP99?: number;
  /** Open mode: the requests counted in `errors`, by what became of them. */
  unanswered?: Unanswered;
}

/** What became of an open loop's requests that got no answer (load-open.ts). */
export interface Unanswered {
  /** Sent, and their connection closed by the server before the answer came. */
  closed: number;
  /** Sent, and their connection failed (refused, reset). */
  error: number;
  /** Sent, and answered in a way the generator does not read (raw-http.ts). */
  unparsed: number;
  /**
   * Sent, and not answered when the run ended, `graceSec` after the last request was due. The generator goes on
   * sending its backlog meanwhile, so with one (`unsent` > 0) up to `connections` of these went out just before the
   * end: cut off rather than unanswered.
   */
  late: number;
  /** Never sent: still waiting in the generator for a free connection when the run ended (the client's queue). */
  unsent: number;
}
