import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';
import { errorBody } from '@animal-store/contract';
import type { RequestHandler } from 'express';
import type { SaturationMonitor } from './monitor.js';
import { SOFT_CEILING, type SignalName } from './pressure.js';
import { CLASS_SLOTS, HARD_LEVEL, neverShed, priorityClass, type ShedPlan } from './priorities.js';
import { TurnBudget } from './turn.js';

/** The plan of a request's bearer key when it is known without a lookup (cached), `none` without a valid key. */
export type PlanProbe = (req: IncomingMessage) => ShedPlan | undefined;

/** Seconds a shed client should wait: overload passes in seconds, and clients add their own jitter. */
export const SHED_RETRY_AFTER_SECONDS = 1;

/**
 * A string, not a Buffer: node:http sends a string body in one write with the response's head, where a Buffer goes
 * out as a second chunk (through the socket's writev, which copies both into one buffer), and the write is the
 * largest part of what a refusal costs.
 */
const SHED_BODY = JSON.stringify(
  errorBody('service_unavailable', 'The service is overloaded; retry after the Retry-After delay'),
);
/** A flat list of names and values: writeHead takes it as is, with no object to walk or header map to fill. */
const SHED_HEADERS = [
  'Content-Type',
  'application/json; charset=utf-8',
  'Content-Length',
  String(Buffer.byteLength(SHED_BODY)),
  'Retry-After',
  String(SHED_RETRY_AFTER_SECONDS),
  'Cache-Control',
  'no-store',
];

/** When an admitted request was let in (performance.now()), on its response. */
const ADMITTED_AT = Symbol('admittedAt');
type Admitted = ServerResponse & { [ADMITTED_AT]?: number };

/** Requests the first gate let through without knowing their plan: the second decides after the key lookup. */
const undecided = new WeakSet<IncomingMessage>();

/** While nothing is shed, one request in this many has its plan looked at, for the spread of the traffic alone. */
const SPREAD_SAMPLE = 8;

export interface AdmissionOptions {
  readonly monitor: Pick<SaturationMonitor, 'level' | 'pressure' | 'utilization'>;
  /** Told of every shed answer (metrics). */
  readonly onShed?: (plan: ShedPlan | 'unknown', signal: SignalName, req: IncomingMessage) => void;
  /**
   * Whether admitted requests' times in the process are kept for takeTimeInProcess: only when a signal reads them
   * (PostgreSQL's), so no other request pays for a clock reading and a histogram record.
   */
  readonly timesInProcess?: boolean;
  /**
   * The work one turn of the event loop admits (turn.ts; LOAD_SHED_TURN_BUDGET_MS): past it, the turn's remaining
   * requests below Enterprise are shed, lowest plan first. A TurnBudget (a test's clock), a budget in ms, or 0/unset:
   * off.
   */
  readonly turn?: TurnBudget | number;
  /**
   * The turn budget applies only while the loop was busy at least this share of the monitor's last sample
   * (LOAD_SHED_TURN_UTILIZATION): a long turn in a loop that then idles (a database's answers coming back together)
   * delays the next requests by less than shedding them would cost. Default 0: always.
   */
  readonly turnFromUtilization?: number;
}

/**
 * Admission control at the door. `admit` runs on node:http's request event, before Express and before any key lookup
 * or database work: a request that may be shed is answered 503 there, with a body made once, at the cost of little
 * more than parsing it. A request of class c is shed with probability clamp(level - c, 0, 1) (pressure.ts), spread
 * evenly by an accumulator per class rather than by chance. Its plan comes from the key cache (`planOf`); a key that
 * is not cached is decided by `afterKeyLookup` instead, and at the hard level everything that may be shed is shed
 * without looking at the key. Admitted requests are counted in flight until their response closes. The requests
 * offered are counted per class (every one while shedding, one in SPREAD_SAMPLE while not), so the controller can
 * turn a share to shed into a level over the classes the traffic holds (pressure.ts's levelFor).
 */
export class Admission {
  #inFlight = 0;
  /** Shed debt per class and method, in halves of a class (0, 0.5, 1, ...). */
  readonly #debt = new Float64Array(CLASS_SLOTS);
  /** Requests offered per half class since takeOffered (while nothing is shed, a sample of them). */
  #offered = new Float64Array(CLASS_SLOTS);
  #unsampled = 0;
  /** Tells the plan of a cached key (createApp sets it: the key cache lives in the app). */
  planOf: PlanProbe = () => undefined;
  /** Refuses the requests of keys already over their limits (key-door.ts; createApp sets it), before shedding. */
  door: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  /** Admitted requests' times in the process (µs), since takeTimeInProcess. */
  readonly #times: RecordableHistogram = createHistogram();
  readonly #finished: (this: Admitted) => void;
  readonly #turn: TurnBudget;

  constructor(private readonly options: AdmissionOptions) {
    const { turn } = options;
    this.#turn = turn instanceof TurnBudget ? turn : new TurnBudget(turn ?? 0);
    const answered = () => void this.#inFlight--;
    const times = this.#times;
    // A function, not an arrow: the response whose 'close' it hears is its `this`.
    this.#finished = options.timesInProcess
      ? function finished(this: Admitted) {
          answered();
          const at = this[ADMITTED_AT];
          if (at !== undefined) times.record(Math.max(1, Math.round((performance.now() - at) * 1000)));
        }
      : answered;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** True when the request goes on; false when it was answered 503 here. */
  admit(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.door?.(req, res)) return false;
    const { level, utilization, pressure } = this.options.monitor;
    const busy = utilization >= (this.options.turnFromUtilization ?? 0);
    // At the soft ceiling, held there by the loop's own delay, the turn budget alone decides (turn.ts says why).
    const turnAlone =
      busy && level === SOFT_CEILING && pressure.signal === 'event_loop_delay' && this.#turn.budgetMs > 0;
    // Every turn is timed, busy or not, so the first busy turn knows what the one before it admitted (turn.ts).
    const over = this.#turn.over();
    const spent = turnAlone ? this.#turn.spent() : busy ? over : undefined;
    // Looked up once each, and only while a gate is shut: the exemption, then the plan both gates judge.
    const exempt = (spent !== undefined || level > 0) && neverShed(req.url ?? '/');
    const turnPlan = spent === undefined || exempt ? undefined : this.planOf(req);
    if (turnPlan !== undefined && this.#turnSheds(req, res, turnPlan, spent!)) return false;
    if (turnAlone && turnPlan !== undefined) this.#countPlan(turnPlan, req);
    else if (level > 0 && !exempt) {
      const plan = level >= HARD_LEVEL ? 'unknown' : spent === undefined ? this.planOf(req) : turnPlan;
      if (plan === undefined) undecided.add(req);
      else if (plan === 'unknown' || this.#sheds(plan, req.method ?? 'GET', level)) {
        this.#shed(req, res, plan, this.options.monitor.pressure.signal);
        return false;
      }
    } else if (level === 0 && ++this.#unsampled === SPREAD_SAMPLE) {
      this.#unsampled = 0;
      this.#countSample(req);
    }
    this.#inFlight++;
    if (this.options.timesInProcess) (res as Admitted)[ADMITTED_AT] = performance.now();
    res.once('close', this.#finished);
    return true;
  }

  /** The second gate, right after the key lookup, for the requests whose plan the first could not tell. */
  readonly afterKeyLookup: RequestHandler = (req, res, next) => {
    if (!undecided.has(req)) return next();
    undecided.delete(req);
    const plan: ShedPlan = req.apiKey ? req.apiKey.plan : 'none';
    // #sheds counts it among the requests offered.
    const { level, pressure } = this.options.monitor;
    if (this.#sheds(plan, req.method, level)) this.#shed(req, res, plan, pressure.signal);
    else next();
  };

  /** The median time in the process (ms) of the requests answered since the last call; undefined if none was. */
  takeTimeInProcess(): number | undefined {
    const times = this.#times;
    const median = times.count > 0 ? times.percentile(50) / 1000 : undefined;
    times.reset();
    return median;
  }

  /** The requests offered per half class since the last call, for the controller's spread of the traffic. */
  takeOffered(): Float64Array {
    const offered = this.#offered;
    this.#offered = new Float64Array(CLASS_SLOTS);
    return offered;
  }

  /**
   * Sheds a request of `plan` that arrives once its turn has worked `spent` ms, past its class's share of the turn's
   * budget and past what the turn before it admitted allows (turn.ts). Only a key the cache holds has a plan here: an
   * uncached one goes on to its lookup and the level's gate.
   */
  #turnSheds(req: IncomingMessage, res: ServerResponse, plan: ShedPlan, spent: number): boolean {
    const cls = priorityClass(plan, req.method ?? 'GET');
    if (spent <= this.#turn.limit(cls)) return false;
    this.#turn.cut(spent);
    this.#count(cls * 2);
    this.#shed(req, res, plan, 'event_loop_turn');
    return true;
  }

  #countSample(req: IncomingMessage): void {
    if (neverShed(req.url ?? '/')) return;
    const plan = this.planOf(req);
    if (plan !== undefined) this.#countPlan(plan, req);
  }

  /** Counts a request of `plan` among those offered, in its class's slot. */
  #countPlan(plan: ShedPlan, req: IncomingMessage): void {
    this.#count(priorityClass(plan, req.method ?? 'GET') * 2);
  }

  #count(slot: number): void {
    this.#offered[slot] = this.#offered[slot]! + 1;
  }

  #sheds(plan: ShedPlan, method: string, level: number): boolean {
    const cls = priorityClass(plan, method);
    const share = Math.min(1, Math.max(0, level - cls));
    const slot = cls * 2;
    this.#count(slot);
    if (share === 0) {
      this.#debt[slot] = 0;
      return false;
    }
    const debt = this.#debt[slot]! + share;
    if (debt < 1) {
      this.#debt[slot] = debt;
      return false;
    }
    this.#debt[slot] = debt - 1;
    return true;
  }

  #shed(req: IncomingMessage, res: ServerResponse, plan: ShedPlan | 'unknown', signal: SignalName): void {
    res.writeHead(503, SHED_HEADERS);
    res.end(SHED_BODY);
    this.options.onShed?.(plan, signal, req);
  }
}
