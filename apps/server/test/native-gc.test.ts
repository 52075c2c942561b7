/**
 * better-sqlite3's objects are node::ObjectWrap. Compiled against Node 24.19.0 or later headers, ObjectWrap adds an
 * environment cleanup hook per object and removes it in its destructor through the isolate's current context; a
 * statement collected by a GC outside JavaScript (V8's idle-time memory reducer) then aborts the process with
 * "Assertion failed: (env) != nullptr". The Dockerfile and scripts/test-node24.sh compile it against headers without the
 * hook (NODE_GYP_HEADERS). This runs what an idle SQLite server does: statements dropped while their database stays
 * open (Prisma's adapter prepares one per query), then nothing for a few seconds, with the module this run loads.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

const IDLE_AFTER_CHURN = `
const Database = require(${JSON.stringify(BETTER_SQLITE3)});
const db = new Database(':memory:');
db.exec('CREATE TABLE t (a)');
const churn = () => { for (let i = 0; i < 20000; i++) db.prepare('SELECT ' + (i % 50) + ' AS v FROM t').all(); };
churn();
// A burst of allocation, as a request burst makes: V8's memory reducer then collects while the process idles.
let burst = [];
for (let i = 0; i < 200; i++) burst.push(new Array(10000).fill(i));
burst = [];
setTimeout(() => { churn(); db.close(); console.log('idled'); }, 8000);
`;

describe('better-sqlite3 on this Node', () => {
  it('survives the garbage collection of dropped statements while the process idles', async () => {
    const child = spawn(process.execPath, ['-e', IDLE_AFTER_CHURN], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    );
    expect({ code, signal, out: out.trim(), err: err.split('\n').slice(0, 3).join('\n') }).toEqual({
      code: 0,
      signal: null,
      out: 'idled',
      err: '',
    });
  }, 30_000);
});
