/**
 * A private npm registry for one test run: Verdaccio from npm on 127.0.0.1, storage in a temporary folder. Our scope
 * (`@animal-store/*`) is served only from what is published to it (no uplink: a package of that name elsewhere never
 * leaks in); every other package goes through an uplink to the registry the machine's npm configuration names.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startChildService } from '@animal-store/test-services';

export interface Registry {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** An npm token of the user registered for this run (publish needs one). */
  token: string;
  /** `.npmrc` lines: the @animal-store scope to this registry, with or without the token. */
  npmrc(options?: { auth?: boolean }): string;
  /** The registry's document of a package (404: undefined). */
  packument(name: string): Promise<Packument | undefined>;
  stop(): Promise<void>;
}

export interface Packument {
  'dist-tags': Record<string, string>;
  versions: Record<string, { dependencies?: Record<string, string>; engines?: Record<string, string> }>;
}

const VERDACCIO_BIN = createRequire(import.meta.url).resolve('verdaccio/bin/verdaccio');

export async function startRegistry(options: { startTimeoutMs?: number } = {}): Promise<Registry> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-verdaccio-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const uplink = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
  writeFileSync(join(dir, 'config.yaml'), config(dir, uplink));
  const service = startChildService(
    'Verdaccio',
    process.execPath,
    [VERDACCIO_BIN, '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`],
    process.env,
  );
  const stop = async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await service.waitForHttp(new URL('-/ping', url).href, options.startTimeoutMs ?? 60_000);
    const token = await addUser(url);
    const host = url.replace(/^http:/, '');
    return {
      url,
      token,
      npmrc: ({ auth = false } = {}) => `@animal-store:registry=${url}\n${auth ? `${host}:_authToken=${token}\n` : ''}`,
      packument: async (name) => {
        const response = await fetch(new URL(name.replace('/', '%2f'), url));
        if (response.status === 404) return undefined;
        if (!response.ok) throw new Error(`GET ${name}: ${response.status}`);
        return (await response.json()) as Packument;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Verdaccio's configuration: htpasswd users, our scope local only, the rest proxied. */
function config(dir: string, uplink: string): string {
  return `storage: ${join(dir, 'storage')}
auth:
  htpasswd:
    file: ${join(dir, 'htpasswd')}
    max_users: 1
uplinks:
  upstream:
    url: ${uplink}
    timeout: 60s
packages:
  '@animal-store/*':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
  '**':
    access: $all
    publish: $authenticated
    proxy: upstream
publish:
  allow_offline: true
log: { type: stdout, format: pretty, level: warn }
`;
}

/** Registers the run's only user (the CouchDB-style login npm itself uses) and returns its token. */
async function addUser(url: string): Promise<string> {
  const name = 'release';
  const password = crypto.randomUUID();
  const response = await fetch(new URL(`-/user/org.couchdb.user:${name}`, url), {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password }),
  });
  const body = (await response.json()) as { token?: string };
  if (!response.ok || !body.token) throw new Error(`adding the registry user: ${response.status}`);
  return body.token;
}
