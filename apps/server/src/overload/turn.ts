/**
 * The work admitted per turn of the event loop. A saturated loop serves, in each turn, every connection that has a
 * request ready: the turn lasts as long as all of them, and a request that arrives meanwhile waits for the whole turn
 * and part of the next. So admitted latency is the length of the loop's turns, and bounding what one turn admits
 * bounds it, whatever the controller's level (pressure.ts, which acts on samples every 100 ms and holds the loop at
 * its target on average) does meanwhile. Once a turn has worked past a request's share of the budget, that request is
 * shed (admission.ts): the rest of a long turn costs a 503 each instead of a list each, and the next turn starts
 * sooner. Lowest plan first: requests without a key past half the budget, Free past the budget, Pro past twice it,
 * Business past three times (creates half a class later); Enterprise, the probes, the scrape and the admin API never.
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
 * The time the current turn has worked since its first request. A turn starts with the first request seen after the
 * check phase of the loop (`setImmediate`, armed by that request, runs once the turn's I/O has been served), so a turn
 * with no request costs nothing and an idle loop is never kept awake. The clock and the scheduler are a test's to set.
 */
export class TurnBudget {
  #start = 0;
  #armed = false;
  readonly #ended = () => {
    this.#armed = false;
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

  /** Whether this turn has worked past the lowest class's share: only then is a request's class worth looking up. */
  over(): number | undefined {
    if (this.budgetMs <= 0) return undefined;
    const spent = this.spent();
    return spent > turnLimit(this.budgetMs, 0) ? spent : undefined;
  }
}
