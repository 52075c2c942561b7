import { PLAN_NAMES } from '@animal-store/contract';
import { Counter, Gauge, type Registry, type RegistryContentType } from 'prom-client';
import { SIGNALS } from './pressure.js';

/**
 * The overload metrics (names by the convention in docs/operations.md), registered on the app's registry: shed
 * answers by the signal that caused them and the plan, concurrency refusals by plan, the shedder's signals and level.
 */
export class OverloadMetrics {
  readonly shed: Counter<'reason' | 'plan'>;
  readonly concurrencyRefusals: Counter<'plan'>;
  readonly signal: Gauge<'signal'>;
  readonly level: Gauge;

  constructor(registry: Registry<RegistryContentType>) {
    const registers = [registry];
    this.shed = new Counter({
      name: 'animal_store_load_shed_total',
      help: `Requests answered 503 by load shedding, by the signal past its threshold (${SIGNALS.join(', ')}) and plan (none: no valid key; unknown: shed before its key was looked at)`,
      labelNames: ['reason', 'plan'] as const,
      registers,
    });
    this.concurrencyRefusals = new Counter({
      name: 'animal_store_concurrency_refusals_total',
      help: `Requests refused 429 concurrency_limit_exceeded (too many of the key in flight), by plan (${PLAN_NAMES.join(', ')})`,
      labelNames: ['plan'] as const,
      registers,
    });
    this.signal = new Gauge({
      name: 'animal_store_load_shed_signal',
      help: 'The load shedder’s signals at its last sample: event_loop_delay and request_wait (seconds), event_loop_utilization (0-1), requests_in_flight, db_pool_queue',
      labelNames: ['signal'] as const,
      registers,
    });
    this.level = new Gauge({
      name: 'animal_store_load_shed_level',
      help: 'The load shedder’s level: 0 admits everything; a request of class c (no key 0, free 1 ... enterprise 4; creates +0.5) is shed with probability clamp(level - c, 0, 1)',
      registers,
    });
  }
}
