// Who is calling, as the rate limits see it. The socket peer is the truth;
// X-Forwarded-For is honoured only through proxies TRUST_PROXY describes, and
// only when they sit in trusted networks: a client that reaches the service
// directly can never choose its own address.

type Network = { bytes: Uint8Array; prefix: number };

export type TrustProxy =
  | { kind: "none" }
  /**
   * Trust this many proxy hops in front of the service, each of which must be
   * inside `networks` (TRUST_PROXY_NETWORKS): a peer outside them is the
   * caller, whatever its X-Forwarded-For says.
   */
  | { kind: "hops"; hops: number; networks: Network[] }
  /** Trust proxies whose address falls in one of these networks. */
  | { kind: "networks"; networks: Network[] };

function parseIPv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (const [index, part] of parts.entries()) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    bytes[index] = value;
  }
  return bytes;
}

function parseIPv6(text: string): Uint8Array | null {
  let input = text.replace(/^\[|\]$/g, "").split("%")[0] ?? "";
  let tail: number[] = [];
  const lastColon = input.lastIndexOf(":");
  if (input.includes(".") && lastColon >= 0) {
    const v4 = parseIPv4(input.slice(lastColon + 1));
    if (!v4) return null;
    tail = [((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0)];
    input = `${input.slice(0, lastColon)}:0:0`;
    tail.length = 2;
  }
  const halves = input.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === "" ? [] : part.split(":"));
  const head = parse(halves[0] ?? "");
  const rest = halves.length === 2 ? parse(halves[1] ?? "") : [];
  const missing = 8 - head.length - rest.length;
  // Without "::" there must be eight groups; "::" stands for at least one.
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  if (groups.length !== 8) return null;
  const bytes = new Uint8Array(16);
  for (const [index, group] of groups.entries()) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
    const value = Number.parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  }
  if (tail.length === 2) {
    bytes[12] = (tail[0] ?? 0) >> 8;
    bytes[13] = (tail[0] ?? 0) & 0xff;
    bytes[14] = (tail[1] ?? 0) >> 8;
    bytes[15] = (tail[1] ?? 0) & 0xff;
  }
  return bytes;
}

/** Parses an address; IPv4-mapped IPv6 (::ffff:a.b.c.d) becomes IPv4. */
export function parseAddress(text: string): Uint8Array | null {
  const trimmed = text.trim();
  const v4 = parseIPv4(trimmed);
  if (v4) return v4;
  const v6 = parseIPv6(trimmed);
  if (!v6) return null;
  const mapped = v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff;
  return mapped ? v6.slice(12) : v6;
}

function inNetwork(address: Uint8Array, network: Network): boolean {
  if (address.length !== network.bytes.length) return false;
  let bits = network.prefix;
  for (let i = 0; i < address.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((address[i] ?? 0) & mask) !== ((network.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** Names usable in TRUST_PROXY for well-known ranges (as in Express's proxy-addr). */
const NAMED_NETWORKS: Record<string, string[]> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
  uniquelocal: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

function parseNetwork(entry: string): Network {
  const [addressText = "", prefixText, extra] = entry.split("/");
  const bytes = extra === undefined ? parseAddress(addressText) : null;
  if (!bytes) throw new Error(`TRUST_PROXY: '${entry}' is not an address, a network or a known name`);
  const prefix =
    prefixText === undefined
      ? bytes.length * 8
      : /^\d{1,3}$/.test(prefixText)
        ? Number(prefixText)
        : Number.NaN;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bytes.length * 8) {
    throw new Error(`TRUST_PROXY: '${entry}' has an invalid prefix length`);
  }
  return { bytes, prefix };
}

/** Where proxies counted by a hop count may be, unless TRUST_PROXY_NETWORKS says otherwise: private addresses. */
const DEFAULT_PROXY_NETWORKS = "loopback,linklocal,uniquelocal";

/** A comma-separated list of addresses, CIDR networks and named ranges. */
function parseNetworks(text: string, variable: string): Network[] {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries.flatMap((entry) =>
    (NAMED_NETWORKS[entry] ?? [entry]).map((network) => {
      try {
        return parseNetwork(network);
      } catch (error) {
        throw new Error((error as Error).message.replace(/^TRUST_PROXY/, variable));
      }
    }),
  );
}

/**
 * TRUST_PROXY: unset, "" , "false" or "0" → trust nobody (the socket peer is
 * the caller); "2" → the two nearest hops are our proxies, provided each is
 * inside TRUST_PROXY_NETWORKS (`proxyNetworks`, default: loopback, link-local
 * and private addresses); a comma-separated list of addresses, CIDR networks
 * and the names loopback, linklocal and uniquelocal → proxies in those
 * networks. "true" (trust anyone) is refused: it would let every client
 * choose its own address.
 */
export function parseTrustProxy(spec: string | undefined, proxyNetworks?: string): TrustProxy {
  const text = spec?.trim() ?? "";
  if (text === "" || text === "false" || text === "0") return { kind: "none" };
  if (/^\d+$/.test(text)) {
    const networks = parseNetworks(proxyNetworks?.trim() || DEFAULT_PROXY_NETWORKS, "TRUST_PROXY_NETWORKS");
    if (networks.length === 0) throw new Error("TRUST_PROXY_NETWORKS: no network given");
    return { kind: "hops", hops: Number(text), networks };
  }
  if (text === "true") {
    throw new Error(
      "TRUST_PROXY: 'true' would trust any client's X-Forwarded-For; give the number of proxy hops or their networks",
    );
  }
  return { kind: "networks", networks: parseNetworks(text, "TRUST_PROXY") };
}

function format(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(":");
}

/**
 * The rate-limit identity of a caller: an IPv4 address as is, an IPv6 address
 * reduced to its /64 (one subscriber usually owns a whole /64).
 */
export function rateLimitSubject(address: string): string {
  const bytes = parseAddress(address);
  if (!bytes) return `other:${address.slice(0, 64)}`;
  if (bytes.length === 4) return format(bytes);
  const network = new Uint8Array(16);
  network.set(bytes.slice(0, 8));
  return `${format(network)}/64`;
}

/**
 * The identity the connection caps count a peer by (http/server.ts): an IPv4
 * address as is, an IPv6 address reduced to its /48, the usual assignment to
 * one site (issue 53, G1: one host with a /56 was 256 peers at /64).
 */
export function connectionSubject(address: string): string {
  const bytes = parseAddress(address);
  if (!bytes) return `other:${address.slice(0, 64)}`;
  if (bytes.length === 4) return format(bytes);
  const network = new Uint8Array(16);
  network.set(bytes.slice(0, 6));
  return `${format(network)}/48`;
}

/**
 * One X-Forwarded-For entry as an address, or null. Some proxies append the
 * client's port ("203.0.113.7:51234", "[2001:db8::1]:443"): it is dropped.
 */
function parseForwardedEntry(entry: string): Uint8Array | null {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(entry);
  if (bracketed) return parseAddress(bracketed[1] ?? "");
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(entry);
  return parseAddress(v4WithPort ? (v4WithPort[1] ?? "") : entry);
}

/**
 * The caller's address given the socket peer, X-Forwarded-For and the trust
 * setting. Without trust the peer is the answer, whatever the header says.
 * With trust, the chain is walked from the nearest hop outwards and stops at
 * the first address that is not a trusted proxy; an unparsable entry stops
 * the walk at the last trusted proxy (so garbage never becomes an identity).
 */
export function resolveClientAddress(peer: string, forwardedFor: string | null, trust: TrustProxy): string {
  if (trust.kind === "none" || !forwardedFor) return peer;
  const chain = forwardedFor
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  // Addresses from nearest to farthest: the peer, then X-Forwarded-For right to left.
  const hops: Array<Uint8Array | null> = [parseAddress(peer), ...chain.reverse().map(parseForwardedEntry)];
  if (trust.kind === "hops") {
    // Each of the nearest `hops` addresses must be a proxy in a trusted
    // network; the first that is not is the caller (for the peer itself: a
    // client that reached the service directly).
    let last = peer;
    const farthest = Math.min(trust.hops, hops.length - 1);
    for (let index = 0; index < farthest; index++) {
      const bytes = hops[index];
      if (!bytes) return last;
      if (!trust.networks.some((network) => inNetwork(bytes, network))) return format(bytes);
      last = format(bytes);
    }
    const candidate = hops[farthest];
    return candidate ? format(candidate) : last;
  }
  let last = peer;
  for (const bytes of hops) {
    if (!bytes) return last;
    if (!trust.networks.some((network) => inNetwork(bytes, network))) return format(bytes);
    last = format(bytes);
  }
  return last;
}
