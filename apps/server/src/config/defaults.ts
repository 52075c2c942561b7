import { loadConfig, type Config } from './load.js';

/**
 * The configuration of an empty environment: every default of env.ts, typed. Whatever runs without a configuration
 * (createApp without options, tests, the database opened by a tool) takes its defaults from here, never from a number
 * of its own.
 */
export const DEFAULTS: Readonly<Config> = Object.freeze(loadConfig({}));
