import { CROCKFORD32 } from "./encoding.ts";

/** Every id prefix in use. Add new ones here (and nowhere else). */
export const ID_PREFIXES = [
  "prj",
  "key",
  "msg",
  "req",
  "clm",
  "acc",
  "aid",
  "idem",
  "cre",
  "aud",
  "dss",
  "srq",
  "vrf",
] as const;

export type IdPrefix = (typeof ID_PREFIXES)[number];

/** Length of the part after `<prefix>_`: 10 timestamp + 16 random characters. */
export const ID_BODY_LENGTH = 26;

const TIME_CHARS = 10;
const RANDOM_BYTES = 10;
const MAX_TIME = 2 ** 48 - 1;

// 10 base32 characters hold 50 bits; the timestamp has 48, so the first
// character is always 0-7. The pattern insists on that, and on lowercase.
const BODY_PATTERN = "[0-7][0-9a-hjkmnp-tv-z]{25}";
const ID_PATTERNS: ReadonlyMap<string, RegExp> = new Map(
  ID_PREFIXES.map((prefix) => [prefix, new RegExp(`^${prefix}_${BODY_PATTERN}$`)]),
);

/**
 * Random bytes for ids, drawn from the CSPRNG a pool at a time (as Node's
 * randomUUID does) instead of one call per id: each byte is handed out once.
 */
const RANDOM_POOL_BYTES = 4_096 - (4_096 % RANDOM_BYTES);
let randomPool = new Uint8Array(0);
let randomOffset = 0;

function nextRandomBytes(): Uint8Array {
  if (randomOffset + RANDOM_BYTES > randomPool.length) {
    randomPool = crypto.getRandomValues(new Uint8Array(RANDOM_POOL_BYTES));
    randomOffset = 0;
  }
  const bytes = randomPool.subarray(randomOffset, randomOffset + RANDOM_BYTES);
  randomOffset += RANDOM_BYTES;
  return bytes;
}

/** The last timestamp encoded, and its characters: ids minted in the same millisecond share them. */
let lastTimeMs = -1;
let lastTime = "";

/**
 * A new `<prefix>_<body>` id. The body is 26 characters of lowercase Crockford
 * base32: a 48-bit big-endian millisecond timestamp (10 characters) followed by
 * 80 random bits (16 characters). Ids therefore sort by creation time as plain
 * strings (order within the same millisecond is random).
 *
 * `timeMs` defaults to `Date.now()`; pass a clock's reading to keep ids in step
 * with an injected clock.
 */
export function newId(prefix: IdPrefix, timeMs: number = Date.now()): string {
  if (!ID_PATTERNS.has(prefix)) throw new TypeError(`unknown id prefix "${String(prefix)}"`);
  if (!Number.isSafeInteger(timeMs) || timeMs < 0 || timeMs > MAX_TIME) {
    throw new RangeError("id timestamp must be an integer millisecond between 0 and 2^48 - 1");
  }
  if (timeMs !== lastTimeMs) {
    let time = "";
    let t = timeMs;
    for (let i = 0; i < TIME_CHARS; i++) {
      time = CROCKFORD32[t % 32]! + time;
      t = Math.floor(t / 32);
    }
    lastTimeMs = timeMs;
    lastTime = time;
  }
  const time = lastTime;
  const random = nextRandomBytes();
  let rest = "";
  for (let group = 0; group < RANDOM_BYTES; group += 5) {
    // 5 bytes = 40 bits = 8 characters; 40 bits are exact in a double.
    let n = 0;
    for (let j = 0; j < 5; j++) n = n * 256 + random[group + j]!;
    let chunk = "";
    for (let j = 0; j < 8; j++) {
      chunk = CROCKFORD32[n % 32]! + chunk;
      n = Math.floor(n / 32);
    }
    rest += chunk;
  }
  return `${prefix}_${time}${rest}`;
}

/** True only for a well-formed id with exactly this prefix (cheap; no I/O). */
export function isId(prefix: IdPrefix, value: unknown): value is string {
  if (typeof value !== "string") return false;
  const pattern = ID_PATTERNS.get(prefix);
  return pattern?.test(value) === true;
}

/** The creation time (ms since the epoch) encoded in a well-formed id, or null. */
export function idTimestamp(id: string): number | null {
  const underscore = id.indexOf("_");
  if (underscore < 0) return null;
  const prefix = id.slice(0, underscore);
  if (!isId(prefix as IdPrefix, id)) return null;
  let t = 0;
  for (const char of id.slice(underscore + 1, underscore + 1 + TIME_CHARS)) {
    t = t * 32 + CROCKFORD32.indexOf(char);
  }
  return t;
}
