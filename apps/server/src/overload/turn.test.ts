import { describe, expect, it } from 'vitest';
import { turnLimit, TurnBudget } from './turn.js';

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
});
