/** A small dependency-free SVG bar chart of the suite's throughput figures. */
export interface Bar {
  label: string;
  value: number;
  note: string;
  kind: 'baseline' | 'sqlite' | 'postgres';
}

const COLORS: Record<Bar['kind'], string> = { baseline: '#8c8c8c', sqlite: '#2f6db5', postgres: '#c4572a' };
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function barChart(title: string, subtitle: string, bars: Bar[]): string {
  const left = 230;
  const width = 900;
  const barH = 24;
  const gap = 10;
  const top = 64;
  const plotW = width - left - 190;
  const max = Math.max(...bars.map((b) => b.value), 1);
  const height = top + bars.length * (barH + gap) + 40;
  const rows = bars
    .map((b, i) => {
      const y = top + i * (barH + gap);
      const w = Math.max(1, (b.value / max) * plotW);
      return [
        `<text x="${left - 10}" y="${y + barH * 0.7}" text-anchor="end">${esc(b.label)}</text>`,
        `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${COLORS[b.kind]}"/>`,
        `<text x="${(left + w + 8).toFixed(1)}" y="${y + barH * 0.7}">${esc(`${Math.round(b.value).toLocaleString('en-US')} req/s  ${b.note}`)}</text>`,
      ].join('');
    })
    .join('\n');
  const legend = (Object.keys(COLORS) as Bar['kind'][])
    .map(
      (k, i) =>
        `<rect x="${left + i * 140}" y="${height - 26}" width="12" height="12" fill="${COLORS[k]}"/><text x="${left + i * 140 + 18}" y="${height - 16}">${k}</text>`,
    )
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">
<rect width="100%" height="100%" fill="#fff"/>
<text x="16" y="26" font-size="17" font-weight="bold">${esc(title)}</text>
<text x="16" y="46" fill="#555">${esc(subtitle)}</text>
${rows}
${legend}
</svg>
`;
}
