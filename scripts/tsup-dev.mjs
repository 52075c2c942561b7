#!/usr/bin/env node
// `pnpm dev` for a package built with tsup (run from its folder): builds it, then again after every change under the
// folders named by --watch (default src), and runs the command given by --then after each successful build.
//   node ../../scripts/tsup-dev.mjs [--watch <folder>]... [--then "<command>"]
// Why not `tsup --watch`: it watches the files it found at start and loses one that an editor or git replaces (an
// atomic save), as node --watch-path does on Node 20. This watches folders, which see a replaced file as a change.
// dist is not emptied before a build (tsup.config.ts's `clean` is for release builds), so whatever reads it meanwhile
// (the server under node --watch) finds its files. A change during a build makes one more build after it.
import { execSync } from 'node:child_process';
import { readdirSync, watch } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { watch: { type: 'string', multiple: true, default: ['src'] }, then: { type: 'string' } },
});
const { build } = createRequire(join(process.cwd(), 'package.json'))('tsup');

let building = false;
let dirty = false;

async function buildUntilClean() {
  if (building) {
    dirty = true;
    return;
  }
  building = true;
  do {
    dirty = false;
    try {
      await build({ clean: false });
      if (values.then) execSync(values.then, { stdio: 'inherit' });
      console.log(`tsup-dev: built; watching ${values.watch.join(', ')}`);
    } catch (err) {
      console.error(
        `tsup-dev: build failed (${err instanceof Error ? err.message : String(err)}); waiting for changes`,
      );
    }
  } while (dirty);
  building = false;
}

let debounce;
const changed = () => {
  clearTimeout(debounce);
  debounce = setTimeout(() => void buildUntilClean(), 200);
};

const watched = new Set();

/** Watches `folder` and every folder under it (but node_modules); a folder created later is watched when seen. */
function watchTree(folder) {
  if (watched.has(folder)) return;
  let entries;
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch {
    return; // gone meanwhile
  }
  watched.add(folder);
  const watcher = watch(folder, (_event, name) => {
    if (name) watchTree(join(folder, name)); // a no-op unless it is a new folder
    changed();
  });
  watcher.on('error', () => {
    watched.delete(folder);
    watcher.close();
  });
  for (const entry of entries)
    if (entry.isDirectory() && entry.name !== 'node_modules') watchTree(join(folder, entry.name));
}

for (const folder of values.watch) watchTree(folder);
await buildUntilClean();
