/**
 * better-sqlite3's objects are node::ObjectWrap. Compiled against Node 24.19.0 or later headers, ObjectWrap adds an
 * environment cleanup hook per object and removes it in its destructor; on Node 24, a statement collected by a GC
 * outside JavaScript (V8's idle-time memory reducer) then aborts the process with "Assertion failed: (env) != nullptr".
 * The Dockerfile's NODE_GYP_HEADERS names the headers the image compiles it against (Node 24: 24.18.1's, without the
 * hook; Node 26: its own), and scripts/test-image-node.sh and `test-node.sh 24` compile the test run's module likewise.
 * This runs what an idle SQLite server does (test/idle-gc.cjs, which image:test also runs inside the image) with the
 * module this run loads.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const IDLE_GC = fileURLToPath(new URL('./idle-gc.cjs', import.meta.url));

describe('better-sqlite3 on this Node', () => {
  it('survives the garbage collection of dropped statements while the process idles', async () => {
    const child = spawn(process.execPath, [IDLE_GC], { stdio: ['ignore', 'pipe', 'pipe'] });
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
