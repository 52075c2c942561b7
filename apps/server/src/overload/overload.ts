import type { Registry, RegistryContentType } from 'prom-client';
import type { Config } from '../config/load.js';
import type { Database } from '../db/types.js';
import type { Logger } from '../logger.js';
import type { PlanName } from '@animal-store/contract';
import type { KeyResolver } from '../keys/resolver.js';
import { Admission } from './admission.js';
import { RefusalHold } from './hold.js';
import { KeyDoor } from './key-door.js';
import { OverloadMetrics } from './metrics.js';
import { SaturationMonitor } from './monitor.js';
import { keyProbe, planProbe } from './plan-probe.js';
import type { SaturationSignals } from './pressure.js';

/** Load shedding, assembled: the gate (createServer and createApp use it), its monitor (started by main) and metrics. */
export interface Overload {
  readonly admission: Admission;
  readonly monitor: SaturationMonitor;
  readonly metrics: OverloadMetrics;
  /** Where the door's refusals wait before they are sent. */
  readonly hold: RefusalHold;
}

/** While shedding, a line every this often with what was shed since the last one (never a line per request). */
const REPORT_EVERY_MS = 10_000;

const rounded = (signals: SaturationSignals) => ({
  eventLoopDelayMs: Math.round(signals.eventLoopDelayMs),
  requestWaitMs: Math.round(signals.requestWaitMs ?? 0),
  eventLoopUtilization: Math.round(signals.eventLoopUtilization * 100) / 100,
  inFlight: signals.inFlight,
  dbWaiting: signals.dbWaiting,
});

/**
 * Load shedding on the configuration's thresholds, the database's pool queue (PostgreSQL) as one of its signals, the
 * metrics on the app's registry; logs when shedding starts and stops, and every 10 s while it lasts.
 */
export function createOverload(
  settings: Config['loadShedding'],
  deps: { registry: Registry<RegistryContentType>; db: Pick<Database, 'poolStats'>; logger: Logger },
): Overload {
  const { logger } = deps;
  const metrics = new OverloadMetrics(deps.registry);
  const poolStats = deps.db.poolStats?.bind(deps.db);
  let shed = 0;
  let reportedAt = 0;
  const monitor: SaturationMonitor = new SaturationMonitor({
    thresholds: settings.thresholds,
    inFlight: (): number => admission.inFlight,
    dbWaiting: poolStats && (() => poolStats().waiting),
    offered: () => admission.takeOffered(),
    // Only a database over the network makes requests wait with the loop idle; SQLite's reads are synchronous, so
    // their time in the process is the loop's turns, which the loop's delay counts already.
    timeInProcess: poolStats && (() => admission.takeTimeInProcess()),
    onSample(signals, pressure, level) {
      metrics.signal.set({ signal: 'event_loop_delay' }, signals.eventLoopDelayMs / 1000);
      metrics.signal.set({ signal: 'request_wait' }, (signals.requestWaitMs ?? 0) / 1000);
      metrics.signal.set({ signal: 'event_loop_utilization' }, signals.eventLoopUtilization);
      metrics.signal.set({ signal: 'requests_in_flight' }, signals.inFlight);
      metrics.signal.set({ signal: 'db_pool_queue' }, signals.dbWaiting);
      metrics.level.set(level);
      if (level === 0 || Date.now() - reportedAt < REPORT_EVERY_MS) return;
      logger.warn(
        { level: Math.round(level * 100) / 100, shed, signal: pressure.signal, ...rounded(signals) },
        'shedding load',
      );
      reportedAt = Date.now();
      shed = 0;
    },
    onShedding(on, pressure, signals) {
      if (on) {
        reportedAt = Date.now();
        logger.warn(
          { signal: pressure.signal, ...rounded(signals) },
          'load shedding started: the process is saturated',
        );
      } else {
        logger.info({ shed }, 'load shedding stopped');
        shed = 0;
      }
    },
  });
  const admission: Admission = new Admission({
    monitor,
    timesInProcess: poolStats !== undefined,
    turn: settings.turn.budgetMs,
    turnFromUtilization: settings.turn.utilization,
    onShed(plan, signal) {
      shed++;
      metrics.shed.inc({ reason: signal, plan });
    },
  });
  return { admission, monitor, metrics, hold: new RefusalHold(settings.hold) };
}

/**
 * Connects the gate to an app's key cache: the plan of a cached key for shedding, and the door (key-door.ts) that
 * refuses the keys over their limits before anything else. Returns the door, which the app's limiters tell.
 */
export function connectKeys(
  overload: Overload,
  keys: Pick<KeyResolver, 'peek' | 'peekForPriority'>,
  now: () => number,
  onBannedRefusal: (plan: PlanName) => void,
): KeyDoor {
  const { admission, metrics, hold } = overload;
  const door = new KeyDoor({
    probe: keyProbe(keys),
    hold,
    now,
    onRefused: (refusal, plan) => {
      if (refusal === 'banned') onBannedRefusal(plan);
      else metrics.concurrencyRefusals.inc({ plan });
    },
  });
  admission.planOf = planProbe(keys);
  admission.door = (req, res) => door.refuse(req, res);
  return door;
}
