import { describe, expect, it } from 'vitest';
import { DRAIN, turnLimit, TurnBudget } from './turn.js';

/** A budget on a clock the test moves, whose turn ends when the test says (the check phase's callback). */
function budget(ms: number) {
  let now = 1000;
  const ends: Array<() => void> = [];
  const turn = new TurnBudget(
    ms,
    () => now,
    (f) => void ends.push(f),
  );
  return {
    turn,
    work: (ms: number) => void (now += ms),
    endTurn: () => ends.splice(0).forEach((f) => f()),
    scheduled: () => ends.length,
  };
}

describe('turnLimit', () => {
  it('gives each class below Enterprise its share of the budget, lowest first, and Enterprise none', () => {
    expect(turnLimit(4, 0)).toBe(2);
    expect(turnLimit(4, 1)).toBe(4);
    expect(turnLimit(4, 1.5)).toBe(6);
    expect(turnLimit(4, 2)).toBe(8);
    expect(turnLimit(4, 3.5)).toBe(14);
    expect(turnLimit(4, 4)).toBe(Infinity);
    expect(turnLimit(4, 4.5)).toBe(Infinity);
  });
});

describe('TurnBudget', () => {
  it("counts a turn's work from its first request, and starts again after the turn ends", () => {
    const t = budget(4);
    t.work(50); // idle before the turn: not counted
    expect(t.turn.spent()).toBe(0);
    t.work(3);
    expect(t.turn.spent()).toBe(3);
    expect(t.scheduled()).toBe(1); // one end-of-turn callback per turn, not per request
    t.endTurn();
    t.work(10);
    expect(t.turn.spent()).toBe(0);
    expect(t.scheduled()).toBe(1);
  });

  it('is over only past the lowest class share of the budget, and never with a budget of 0', () => {
    const t = budget(4);
    expect(t.turn.over()).toBeUndefined();
    t.work(2);
    expect(t.turn.over()).toBeUndefined();
    t.work(1);
    expect(t.turn.over()).toBe(3);
    const off = budget(0);
    off.turn.spent();
    off.work(1000);
    expect(off.turn.over()).toBeUndefined();
  });

  it("lets a turn do DRAIN of the last one's work, so a backlog that shrinks is served whole", () => {
    const t = budget(2);
    t.turn.spent();
    t.work(25); // a long turn (a collection's pause, a burst): nothing cut
    t.endTurn();
    expect(t.turn.limit(1)).toBeCloseTo(DRAIN * 25);
    t.turn.spent();
    t.work(18); // the backlog drains: within the allowance
    expect(t.turn.over()).toBeUndefined();
    t.endTurn();
    expect(t.turn.limit(1)).toBeCloseTo(DRAIN * 18);
    t.turn.spent();
    t.work(1); // back to short turns: the budget decides again
    t.endTurn();
    expect(t.turn.limit(1)).toBe(2);
    expect(t.turn.limit(0)).toBe(1);
  });

  it('shrinks the allowance by DRAIN once more for each turn cut in a row, down to the budget', () => {
    const t = budget(2);
    t.turn.spent();
    t.work(40);
    t.endTurn(); // uncut: the next may do 36
    const limits: number[] = [];
    for (let i = 0; i < 12; i++) {
      t.turn.spent();
      const limit = t.turn.limit(1);
      limits.push(limit);
      t.work(limit + 0.5); // the load grows: every turn outlasts its allowance and is cut there
      t.turn.cut(limit + 0.1);
      t.endTurn();
    }
    expect(limits[0]).toBeCloseTo(DRAIN * 40);
    expect(limits[1]).toBeCloseTo(DRAIN * (limits[0]! + 0.1));
    expect(limits[2]).toBeCloseTo(DRAIN ** 2 * (limits[1]! + 0.1));
    for (let i = 1; i < limits.length; i++) expect(limits[i]!).toBeLessThanOrEqual(limits[i - 1]!);
    expect(limits.at(-1)).toBe(2); // the budget, Free's share
    // Uncut again: the allowance is the share of the turn's whole work.
    t.turn.spent();
    t.work(1);
    t.endTurn();
    expect(t.turn.limit(0)).toBe(1);
  });

  it("takes a cut turn's work up to its first shed as what it admitted", () => {
    const t = budget(0.5);
    t.turn.spent();
    t.work(30);
    t.turn.cut(30);
    t.work(10); // the turn's refusals after its first shed
    t.turn.cut(40);
    t.endTurn();
    expect(t.turn.limit(0)).toBeCloseTo(DRAIN * 30);
  });
});
