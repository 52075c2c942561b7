/** Where the suite finds its own build and the server it measures. */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** tooling/bench/dist: the load generator, the baselines and the limiter bench are started from here. */
export const BENCH_DIST = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(BENCH_DIST, '../../..');
/**
 * The built server under test: this checkout's, or another build's (`BENCH_SERVER_DIST=<worktree>/apps/server/dist`),
 * to measure an older commit with the same suite and baselines (a before/after).
 */
export const SERVER_DIST = resolve(process.env['BENCH_SERVER_DIST'] ?? join(REPO_ROOT, 'apps/server/dist'));
/** Another build, measured beside SERVER_DIST in the same rounds by the `compare` scenario (BENCH_COMPARE_DIST). */
export const COMPARE_DIST = process.env['BENCH_COMPARE_DIST'] ? resolve(process.env['BENCH_COMPARE_DIST']) : undefined;
export const SERVER_MAIN = join(SERVER_DIST, 'main.js');
/** The module whose `createServer(app)` builds the service's HTTP server; the floor runs on it too. */
export const SERVER_CONSTRUCTION = join(SERVER_DIST, 'http/server.js');
/** Figures of the last run (git-ignored): latest.json, latest.md, throughput.svg, profiles/. */
export const RESULTS = join(BENCH_DIST, '..', 'results');
