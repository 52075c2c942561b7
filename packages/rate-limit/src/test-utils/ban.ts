import type { BanPolicy } from '../types.js';

/** A ban policy for tests: more than 10 refusals within a clock minute ban for 15 minutes. */
export const TEST_BAN: BanPolicy = Object.freeze({ maxRefusals: 10, windowMs: 60_000, durationMs: 900_000 });
