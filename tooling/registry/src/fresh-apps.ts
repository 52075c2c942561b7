/**
 * Fresh apps in a folder outside the workspace, as another team would start one: a package.json, an .npmrc with the
 * scoped registry line, `npm install` / `pnpm add` of the client by name and version, and the app's own code (from
 * fixtures/). Their environment has nothing of the workspace: no workspace folder on PATH, no npm_* / pnpm_* settings
 * a `pnpm run` hands down, no NODE_PATH.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export type AppKind = 'npm-esm' | 'npm-cjs' | 'pnpm-ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const run = promisify(execFile);

/** How each kind installs, checks and starts. */
const KINDS: Record<AppKind, { type: 'module' | 'commonjs'; install: string[]; check: string[][]; start: string[] }> = {
  'npm-esm': { type: 'module', install: ['npm', 'install', '--no-audit', '--no-fund'], check: [], start: ['app.mjs'] },
  'npm-cjs': {
    type: 'commonjs',
    install: ['npm', 'install', '--no-audit', '--no-fund'],
    check: [],
    start: ['app.cjs'],
  },
  'pnpm-ts': {
    type: 'module',
    install: ['pnpm', 'add'],
    check: [
      ['pnpm', 'exec', 'tsc', '-p', 'tsconfig.node16.json'],
      ['pnpm', 'exec', 'tsc', '-p', 'tsconfig.bundler.json'],
    ],
    start: ['dist/app.js'],
  },
};

export interface FreshApp {
  dir: string;
  /** Runs the app with these variables; returns what it printed as JSON. */
  start(env: Record<string, string>): Promise<unknown>;
}

/**
 * Makes the app in `root/<kind>`, installs `packages` (e.g. `@animal-store/client@1.2.0`) and type-checks it where it
 * is TypeScript. `workspaceRoot` only names what must stay off the app's PATH.
 */
export async function makeFreshApp(options: {
  kind: AppKind;
  root: string;
  npmrc: string;
  packages: string[];
  workspaceRoot: string;
}): Promise<FreshApp> {
  const { kind, root } = options;
  const spec = KINDS[kind];
  const dir = join(root, kind);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '.npmrc'), options.npmrc);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `fresh-${kind}`, private: true, type: spec.type }));
  for (const file of readdirSync(join(FIXTURES, kind))) copyFileSync(join(FIXTURES, kind, file), join(dir, file));
  copyFileSync(join(FIXTURES, 'scenario.cjs'), join(dir, 'scenario.cjs'));

  const env = outsideEnv(options.workspaceRoot);
  const exec = async (argv: string[], extra: Record<string, string> = {}) => {
    const [command, ...args] = argv as [string, ...string[]];
    try {
      return await run(command, args, { cwd: dir, env: { ...env, ...extra }, timeout: 180_000 });
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`${kind}: ${argv.join(' ')} failed:\n${stdout}\n${stderr}`, { cause: error });
    }
  };
  await exec([...spec.install, ...options.packages]);
  for (const check of spec.check) await exec(check);
  return {
    dir,
    start: async (extra) => {
      const { stdout } = await exec([process.execPath, ...spec.start], extra);
      return JSON.parse(stdout) as unknown;
    },
  };
}

/**
 * What `pnpm run` / `pnpm exec` (npm_* and pnpm_* variables: the workspace's settings, catalogs and overrides among
 * them), turbo and vitest hand down. The app reads the user's npm configuration from its files, as usual.
 */
const RUN_SETTINGS = /^(npm_|pnpm_|NODE_PATH$|NODE_OPTIONS$|INIT_CWD$|VITEST|TURBO_)/i;

/** This process's environment without anything that points into the workspace or carries a pnpm run's settings. */
function outsideEnv(workspaceRoot: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (RUN_SETTINGS.test(name)) continue;
    env[name] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((entry) => entry !== '' && !entry.startsWith(workspaceRoot))
    .join(':');
  return env;
}
