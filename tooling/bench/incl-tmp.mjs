import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = p.timeDeltas; 
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (dt[i] ?? 0));
const incl = new Map();
function total(n) { if (incl.has(n.id)) return incl.get(n.id); let t = self.get(n.id) ?? 0; for (const c of n.children ?? []) t += total(byId.get(c)); incl.set(n.id, t); return t; }
for (const n of p.nodes) total(n);
const agg = new Map();
for (const n of p.nodes) {
  const f = n.callFrame; const key = `${f.functionName || '(anon)'} ${f.url.replace(/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '').replace(/.*\/work\/main\//, '')}:${f.lineNumber + 1}`;
  // avoid double counting recursion: only count nodes whose ancestors don't share key -- approximate by summing all
  agg.set(key, (agg.get(key) ?? 0) + incl.get(n.id));
}
const busy = [...self.entries()].filter(([id]) => byId.get(id).callFrame.functionName !== '(idle)').reduce((a, [, v]) => a + v, 0);
const rows = [...agg.entries()].filter(([k]) => /apps\/server|packages\/rate-limit|ts-rest|express\/lib\/response|prom-client|pino|zod/.test(k)).sort((a, b) => b[1] - a[1]).slice(0, 40);
for (const [k, v] of rows) console.log((v / 1000).toFixed(0).padStart(7), 'ms', ((100 * v) / busy).toFixed(1).padStart(5) + '%', k);
