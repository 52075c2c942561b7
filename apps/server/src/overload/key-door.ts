import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { errorBody, type PlanName } from '@animal-store/contract';
import { rateLimitErrorBody, rateLimitHeaders, type RateLimitDecision } from '@animal-store/rate-limit';
import type { ApiKeyRecord } from '../db/types.js';
import { rateLimitIdentityOf, type KeyLimits } from '../keys/identity.js';
import { concurrencyRefusalMessage, CONCURRENCY_RETRY_AFTER_SECONDS } from '../rate-limiting/concurrency.js';
import type { RefusalHold } from './hold.js';

/** What the door refused: a key with its lineage's requests all in flight, or a banned key. */
export type DoorRefusal = 'concurrency' | 'banned';

export interface KeyDoorOptions {
  /** The active key of a request when the key cache holds it (plan-probe.ts's keyProbe), without a lookup. */
  readonly probe: (req: IncomingMessage) => ApiKeyRecord | undefined;
  readonly hold: RefusalHold;
  /** The app's clock (ms), as the rate limiter's store reads it. */
  readonly now: () => number;
  /** Told of every refusal (metrics). */
  readonly onRefused?: (refusal: DoorRefusal, plan: PlanName) => void;
}

/** A lineage with requests in flight on this replica: how many, its limit, and its last rate-limit decision. */
interface Lineage {
  inFlight: number;
  readonly limit: number;
  full: boolean;
  decision: RateLimitDecision | undefined;
  answer?: Answer;
}

/** A refusal's headers and body, its length among the headers. */
interface Answer {
  readonly headers: OutgoingHttpHeaders;
  readonly body: string;
}

/** A ban the limiter decided, and its answer as of one second (made again when the second changes). */
interface Ban {
  readonly decision: RateLimitDecision;
  answer?: Answer & { readonly second: number };
}

/** Bans remembered at most (the oldest is forgotten past it: its next request takes the normal path). */
const MAX_BANS = 10_000;
const JSON_TYPE = 'application/json; charset=utf-8';
const RETRY_AFTER_MS = CONCURRENCY_RETRY_AFTER_SECONDS * 1000;

/**
 * Refuses, at the door (before the key lookup, the rate limiter, Express), the requests of a key whose refusal is
 * already known: its lineage has its plan's number of requests in flight on this replica (429
 * `concurrency_limit_exceeded`), or it is banned (429 `api_key_banned`, until the ban ends). Only a key in the key
 * cache is recognised, so the door costs a map lookup (and a hash once per connection), and only while some lineage
 * is full or banned. Its answers carry the rate-limit headers of the lineage's last decision (a ban's, brought to
 * now), are not charged (the limiter was not asked: a refusal that costs nothing needs no budget), and are held
 * (hold.ts), so a client that sends again at once, however many connections it opens, cannot spin the process on
 * refusals. A rate-limited key that is not banned still takes the normal path: its refusals count towards its ban.
 */
export class KeyDoor {
  readonly #lineages = new Map<string, Lineage>();
  readonly #bans = new Map<string, Ban>();
  #full = 0;

  constructor(private readonly options: KeyDoorOptions) {}

  /** True when the request was answered here. */
  refuse(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.#full === 0 && this.#bans.size === 0) return false;
    if (!req.url?.startsWith('/v1/') || req.url.startsWith('/v1/rate_limit')) return false;
    const key = this.options.probe(req);
    if (key === undefined) return false;
    const identity = rateLimitIdentityOf(key);
    const ban = this.#bans.get(identity.key);
    if (ban !== undefined) {
      if (ban.decision.banUntil! > this.options.now()) return this.#refuseBanned(res, ban, key.plan);
      this.#bans.delete(identity.key);
    }
    const lineage = this.#lineages.get(identity.key);
    if (lineage === undefined || !lineage.full || lineage.decision === undefined) return false;
    lineage.answer ??= concurrencyAnswer(lineage.decision, lineage.limit);
    // Held at most until its Retry-After: a slot may free sooner, and the client is told to come back then.
    this.options.hold.answer(res, 429, lineage.answer.headers, lineage.answer.body, RETRY_AFTER_MS);
    this.options.onRefused?.('concurrency', key.plan);
    return true;
  }

  /** A request of `identity` holds one of its slots until `res` closes; `decision` is its rate-limit charge. */
  track(identity: KeyLimits, decision: RateLimitDecision | undefined, res: ServerResponse): void {
    let lineage = this.#lineages.get(identity.key);
    if (lineage === undefined) {
      lineage = { inFlight: 0, limit: identity.limit, full: false, decision };
      this.#lineages.set(identity.key, lineage);
    } else if (decision !== undefined) {
      lineage.decision = decision;
      delete lineage.answer;
    }
    lineage.inFlight++;
    this.#update(lineage);
    const entry = lineage;
    res.once('close', () => {
      entry.inFlight--;
      this.#update(entry);
      if (entry.inFlight === 0 && this.#lineages.get(identity.key) === entry) this.#lineages.delete(identity.key);
    });
  }

  /** The limiter banned this lineage: its requests are refused here until the ban ends. */
  banned(identity: Pick<KeyLimits, 'key'>, decision: RateLimitDecision): void {
    if (decision.reason !== 'banned' || decision.banUntil === null) return;
    this.#bans.delete(identity.key);
    if (this.#bans.size >= MAX_BANS) this.#bans.delete(this.#bans.keys().next().value!);
    this.#bans.set(identity.key, { decision });
  }

  #update(lineage: Lineage): void {
    const full = lineage.inFlight >= lineage.limit;
    if (full !== lineage.full) this.#full += full ? 1 : -1;
    lineage.full = full;
  }

  #refuseBanned(res: ServerResponse, ban: Ban, plan: PlanName): boolean {
    const now = this.options.now();
    const second = Math.floor(now / 1000);
    if (ban.answer?.second !== second) {
      const retryAfterSeconds = Math.max(1, Math.ceil((ban.decision.banUntil! - now) / 1000));
      const current: RateLimitDecision = { ...ban.decision, now, retryAfterSeconds, banStarted: false };
      ban.answer = { second, ...answerOf(rateLimitHeaders(current), rateLimitErrorBody(current)!) };
    }
    this.options.hold.answer(res, 429, ban.answer.headers, ban.answer.body);
    this.options.onRefused?.('banned', plan);
    return true;
  }
}

/** The 429 of a lineage with all its slots taken, with the rate-limit headers of its last decision. */
function concurrencyAnswer(decision: RateLimitDecision, limit: number): Answer {
  return answerOf(
    { ...rateLimitHeaders(decision), 'Retry-After': String(CONCURRENCY_RETRY_AFTER_SECONDS) },
    errorBody('concurrency_limit_exceeded', concurrencyRefusalMessage(limit)),
  );
}

/**
 * A refusal with `headers` and the JSON of `error`. Its length is sent: a held answer is written in one go after the
 * hold, and without a Content-Length node:http would send it chunked, which costs the client a framing to parse. The
 * body stays a string, as the shed answer's (admission.ts): node:http writes a string body in one write with its head.
 */
function answerOf(headers: OutgoingHttpHeaders, error: object): Answer {
  const body = JSON.stringify(error);
  return {
    headers: {
      ...headers,
      'Content-Type': JSON_TYPE,
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'private, no-cache',
    },
    body,
  };
}
