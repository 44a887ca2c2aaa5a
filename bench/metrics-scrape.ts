// Reading the service's Prometheus metrics (internal listener, GET /metrics)
// in a benchmark: histograms as cumulative buckets, their difference between
// two scrapes (what one run added), and a quantile from buckets the way
// PromQL's histogram_quantile interpolates within a bucket.

/** Series name with its labels but without `le` → (upper bound → cumulative count). */
export type Histograms = Map<string, Map<number, number>>;

export type Scrape = { histograms: Histograms; gauges: Map<string, number> };

export async function scrapeMetrics(url: string, token: string): Promise<Scrape> {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return parseExposition(await response.text());
}

export function parseExposition(text: string): Scrape {
  const histograms: Histograms = new Map();
  const gauges = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    const series = line.slice(0, space);
    const value = Number(line.slice(space + 1));
    const bucket = /^(\w+)_bucket\{(.*)\}$/.exec(series);
    if (bucket) {
      const labels = (bucket[2] ?? "").split(",").filter((label) => !label.startsWith("le="));
      const le = /le="([^"]+)"/.exec(bucket[2] ?? "")?.[1] ?? "+Inf";
      const name = labels.length ? `${bucket[1]}{${labels.join(",")}}` : (bucket[1] ?? "");
      const buckets = histograms.get(name) ?? new Map<number, number>();
      buckets.set(le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le), value);
      histograms.set(name, buckets);
      continue;
    }
    gauges.set(series, value);
  }
  return { histograms, gauges };
}

/** What `after` counted that `before` had not (the observations of one run). */
export function histogramDelta(before: Histograms, after: Histograms): Histograms {
  const delta: Histograms = new Map();
  for (const [name, buckets] of after) {
    const earlier = before.get(name);
    delta.set(name, new Map([...buckets].map(([le, count]) => [le, count - (earlier?.get(le) ?? 0)])));
  }
  return delta;
}

/** The q-quantile (seconds) of cumulative buckets, interpolated linearly inside its bucket. */
export function quantile(buckets: Map<number, number>, q: number): number {
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Number.POSITIVE_INFINITY) ?? 0;
  if (total === 0) return 0;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const bound of bounds) {
    const count = buckets.get(bound) ?? 0;
    if (count >= rank) {
      // Past the last finite bound: report that bound (PromQL does the same).
      if (bound === Number.POSITIVE_INFINITY) return lowerBound;
      return lowerBound + ((bound - lowerBound) * (rank - lowerCount)) / Math.max(1, count - lowerCount);
    }
    lowerBound = bound;
    lowerCount = count;
  }
  return lowerBound;
}
