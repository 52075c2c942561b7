/**
 * The work admitted per turn of the event loop. A saturated loop serves, in each turn, every connection that has a
 * request ready: the turn lasts as long as all of them, and a request that arrives meanwhile waits for the whole turn
 * and part of the next. So admitted latency is the length of the loop's turns, and bounding what one turn admits
 * bounds it, whatever the controller's level (pressure.ts, which acts on samples every 100 ms and holds the loop at
 * its target on average) does meanwhile. Once a turn has worked past a request's share of the budget, that request is
 * shed (admission.ts): the rest of a long turn costs a 503 each instead of a list each, and the next turn starts
 * sooner. Lowest plan first: requests without a key past half the budget, Free past the budget, Pro past twice it,
 * Business past three times (creates half a class later); Enterprise, the probes, the scrape and the admin API never.
 * A backlog that drains is served whole: a turn may also do DRAIN of the work the turn before it admitted, so the
 * turns after a long one (a collection's pause, a burst) are cut only if they do not shrink. Below the capacity a
 * backlog's turns shrink (each as long as the load over the capacity times the one before); past it they grow, each
 * turn is cut, and each cut in a row shrinks the allowance by DRAIN once more, back to the budget within a few turns.
 * At the controller's soft ceiling (everything below Enterprise shed) held by the loop's delay, the budget alone decides
 * and each turn admits its budget's work whatever the level: the turns are then long with refusals alone (a refusal
 * costs node:http a parse and a write), shedding more cannot shorten them, and the budget keeps some of the CPU for
 * answers.
 */
import { performance } from 'node:perf_hooks';
import { SOFT_CEILING } from './pressure.js';

/** The turn's work (ms) past which a request of class `cls` (priorities.ts) is shed: Infinity for Enterprise. */
export function turnLimit(budgetMs: number, cls: number): number {
  return cls >= SOFT_CEILING ? Infinity : budgetMs * Math.max(0.5, cls);
}

/**
 * The share of a turn's work the next turn may do whatever the budget: a backlog whose turns shrink faster than this is
 * served whole. After turns cut in a row, the share is DRAIN to the power of their number.
 */
export const DRAIN = 0.9;

/**
 * The time the current turn has worked since its first request, and what the turn before it admitted. A turn starts
 * with the first request seen after the check phase of the loop (`setImmediate`, armed by that request, runs once the
 * turn's I/O has been served), so a turn with no request costs nothing and an idle loop is never kept awake. The clock
 * and the scheduler are a test's to set.
 */
export class TurnBudget {
  #start = 0;
  #armed = false;
  /** The time the current turn had worked when it first shed (undefined while it has not). */
  #cutAt: number | undefined;
  /** Turns cut in a row, up to the last one that ended. */
  #cuts = 0;
  /** The work the current turn may do whatever the budget (DRAIN's share of what the turn before it admitted). */
  #allowance = 0;
  readonly #ended = () => {
    this.#armed = false;
    const cut = this.#cutAt;
    this.#cuts = cut === undefined ? 0 : this.#cuts + 1;
    this.#allowance = cut === undefined ? DRAIN * (this.clock() - this.#start) : DRAIN ** this.#cuts * cut;
    this.#cutAt = undefined;
  };

  constructor(
    readonly budgetMs: number,
    private readonly clock: () => number = () => performance.now(),
    private readonly atTurnEnd: (f: () => void) => void = setImmediate,
  ) {}

  /** The time (ms) the current turn has worked since its first request (0 for that first one). */
  spent(): number {
    const now = this.clock();
    if (this.#armed) return now - this.#start;
    this.#armed = true;
    this.#start = now;
    this.atTurnEnd(this.#ended);
    return 0;
  }

  /** The work (ms) past which this turn sheds a request of class `cls`: its share of the budget, or the allowance. */
  limit(cls: number): number {
    return Math.max(turnLimit(this.budgetMs, cls), this.#allowance);
  }

  /** Notes that the turn shed a request once it had worked `spent` ms: what it admitted ends there. */
  cut(spent: number): void {
    this.#cutAt ??= spent;
  }

  /**
   * The turn's work when it is past the lowest class's limit (only then is a request's class worth looking up), else
   * undefined. Called for every request while the budget is on, so each turn is timed and the next knows what it did.
   */
  over(): number | undefined {
    if (this.budgetMs <= 0) return undefined;
    const spent = this.spent();
    return spent > this.limit(0) ? spent : undefined;
  }
}
