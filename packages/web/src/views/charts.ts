// Charts drawn on the server as inline SVG (no script, no external asset):
// bars per day, stacked by status or single. Colours come from the
// stylesheet's classes, so they follow light and dark mode. The axes' labels
// (the days below, the scale's top, middle and zero at the left) and the
// legend are HTML beside the SVG (they stay legible at 390 px), each bar has
// a <title>, and the numbers are also in a table for screen readers. Days
// with nothing at all are said in words, not drawn as an empty frame.
import { type Html, html } from "../kit/html.ts";
import { dayLabel, number, table } from "./layout.ts";

export type ChartDay = { day: string; values: Record<string, number> };

const WIDTH = 600;
const HEIGHT = 180;
const GAP = 2;

/** A friendly top of the scale: 1, 2, 5, 10, 20, 50, … at or above `max`. */
function scaleTop(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

function bar(
  options: Parameters<typeof barChart>[0],
  day: ChartDay,
  index: number,
  total: number,
  top: number,
): Html {
  const { series } = options;
  const labelOf = options.labelOf ?? ((name: string) => name);
  const slot = WIDTH / Math.max(1, options.days.length);
  const barWidth = Math.max(1, slot - GAP).toFixed(1);
  const x = (index * slot + GAP / 2).toFixed(1);
  let y = HEIGHT;
  const parts = series.map((name) => {
    const value = day.values[name] ?? 0;
    if (value <= 0) return "";
    const height = (value / top) * HEIGHT;
    y -= height;
    return html`<rect class="${options.classOf(name)}" x="${x}" y="${y.toFixed(1)}" width="${barWidth}" height="${height.toFixed(1)}"/>`;
  });
  const described = series
    .filter((name) => (day.values[name] ?? 0) > 0)
    .map((name) => `${labelOf(name)} ${number(day.values[name] ?? 0)}`)
    .join(", ");
  return html`<g><title>${dayLabel(day.day)}: ${number(total)} ${options.unit}${described && series.length > 1 && ` (${described})`}</title>${parts}<rect x="${x}" y="0" width="${barWidth}" height="${HEIGHT}" fill="transparent"/></g>`;
}

/**
 * Bars per day. With several `series`, each day's bar is stacked in their
 * order; `classOf` names each series' colour class.
 */
export function barChart(options: {
  id: string;
  title: string;
  days: ChartDay[];
  series: string[];
  classOf: (series: string) => string;
  labelOf?: (series: string) => string;
  unit: string;
  /** What to do about nothing shown (the empty state's second sentence). */
  emptyHint?: string;
}): Html {
  const { days, series } = options;
  const labelOf = options.labelOf ?? ((name: string) => name);
  const totals = days.map((day) => series.reduce((sum, name) => sum + (day.values[name] ?? 0), 0));
  const top = scaleTop(Math.max(0, ...totals));
  const grid = [0.25, 0.5, 0.75].map((fraction) => {
    const y = (HEIGHT * fraction).toFixed(1);
    return html`<line class="grid" x1="0" x2="${WIDTH}" y1="${y}" y2="${y}"/>`;
  });
  const bars = days.map((day, index) => bar(options, day, index, totals[index] ?? 0, top));
  const legend =
    series.length > 1 &&
    html`<ul class="legend" aria-hidden="true">${series.map((name) => html`<li><span class="swatch ${options.classOf(name)}"></span>${labelOf(name)}</li>`)}</ul>`;
  const first = days[0]?.day;
  const last = days[days.length - 1]?.day;
  const rows = days
    .filter((_, index) => (totals[index] ?? 0) > 0)
    .map((day) => [dayLabel(day.day), ...series.map((name) => number(day.values[name] ?? 0))]);
  if (rows.length === 0)
    return html`<figure class="chart" id="${options.id}" aria-labelledby="${options.id}-title">
<figcaption id="${options.id}-title"><strong>${options.title}</strong></figcaption>
<p class="chart-empty">No ${options.unit} in these ${number(days.length)} days.${options.emptyHint && html` ${options.emptyHint}`}</p>
</figure>`;
  // The y-axis: the top of the scale, its middle when that is a whole number, and zero.
  const middle = top % 2 === 0 ? number(top / 2) : "";
  return html`<figure class="chart" id="${options.id}" aria-labelledby="${options.id}-title">
<figcaption id="${options.id}-title"><strong>${options.title}</strong> <span class="muted">(scale: 0 to ${number(top)} ${options.unit} a day)</span></figcaption>
${legend}
<div class="plot">
<div class="y-axis" aria-hidden="true"><span>${number(top)}</span><span>${middle}</span><span>0</span></div>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${options.id}-title" preserveAspectRatio="none" focusable="false">${grid}${bars}</svg>
<div class="axis" aria-hidden="true"><span>${first && dayLabel(first)}</span><span>${last && dayLabel(last)}</span></div>
</div>
<details><summary>${options.title} as a table</summary>
${
  rows.length > 0
    ? table(
        options.title,
        ["Day", ...series.map((name) => labelOf(name))],
        rows,
        series.map((_, i) => i + 1),
      )
    : html`<p class="muted">Nothing in these days.</p>`
}
</details>
</figure>`;
}

/** A share (0..1) as a percentage with one decimal. */
export function percent(share: number | null): string {
  if (share === null) return "—";
  return `${(Math.round(share * 1000) / 10).toFixed(1)} %`;
}

/** A meter of `used` out of `limit`, in 5 % steps (classes, not styles). */
export function meter(used: number, limit: number, label: string): Html {
  const share = limit <= 0 ? 1 : Math.min(1, used / limit);
  const step = Math.round(share * 20) * 5;
  return html`<div class="meter" role="meter" aria-label="${label}" aria-valuemin="0" aria-valuemax="${limit}" aria-valuenow="${used}"><span class="w${step}"></span></div>`;
}
