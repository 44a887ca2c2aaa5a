import { describe, expect, it } from "vitest";
import {
  connectionSubject,
  parseAddress,
  parseTrustProxy,
  rateLimitSubject,
  resolveClientAddress,
} from "./client-address.ts";

const bytes = (text: string) => Array.from(parseAddress(text) ?? []);

describe("parseAddress", () => {
  it("parses IPv4", () => {
    expect(bytes("203.0.113.7")).toEqual([203, 0, 113, 7]);
    expect(bytes(" 10.0.0.1 ")).toEqual([10, 0, 0, 1]);
  });

  it("refuses malformed IPv4", () => {
    for (const text of [
      "256.1.1.1",
      "1.2.3",
      "1.2.3.4.5",
      "1.2.3.-4",
      "1..2.3",
      "a.b.c.d",
      "1.2.3.4 5",
      "",
    ]) {
      expect(parseAddress(text), text).toBeNull();
    }
  });

  it("parses IPv6, compressed, bracketed, with a zone or an IPv4 tail", () => {
    expect(bytes("::1")).toEqual([...Array(15).fill(0), 1]);
    expect(bytes("2001:db8::1")).toEqual([0x20, 0x01, 0x0d, 0xb8, ...Array(11).fill(0), 1]);
    expect(bytes("[2001:db8::1]")).toEqual(bytes("2001:db8::1"));
    expect(bytes("fe80::1%eth0")).toEqual(bytes("fe80::1"));
    expect(bytes("2001:DB8:0:0:0:0:0:1")).toEqual(bytes("2001:db8::1"));
    expect(bytes("64:ff9b::192.0.2.33")).toEqual([0, 0x64, 0xff, 0x9b, ...Array(8).fill(0), 192, 0, 2, 33]);
    expect(bytes("::")).toEqual(Array(16).fill(0));
  });

  it("turns IPv4-mapped IPv6 into IPv4", () => {
    expect(bytes("::ffff:198.51.100.4")).toEqual([198, 51, 100, 4]);
    expect(bytes("::ffff:c633:6404")).toEqual([198, 51, 100, 4]);
  });

  it("refuses malformed IPv6", () => {
    for (const text of [
      "1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:8:9",
      "1::2::3",
      "1:2:3:4:5:6:7:8::",
      "::1:2:3:4:5:6:7:8",
      "12345::1",
      "g::1",
      ":1:2:3:4:5:6:7",
      "::ffff:1.2.3.256",
      "2001:db8::1/64",
    ]) {
      expect(parseAddress(text), text).toBeNull();
    }
  });
});

describe("parseTrustProxy", () => {
  it("trusts nobody when unset, empty, false or 0", () => {
    for (const spec of [undefined, "", "  ", "false", "0"])
      expect(parseTrustProxy(spec)).toEqual({ kind: "none" });
  });

  it("reads a hop count, whose proxies must be in private networks unless TRUST_PROXY_NETWORKS names others", () => {
    expect(parseTrustProxy("1")).toMatchObject({ kind: "hops", hops: 1 });
    expect(parseTrustProxy(" 2 ")).toMatchObject({ kind: "hops", hops: 2 });
    const defaults = parseTrustProxy("1");
    expect(defaults.kind === "hops" && defaults.networks.map((n) => n.prefix)).toEqual([
      8, 128, 16, 10, 8, 12, 16, 7,
    ]);
    const named = parseTrustProxy("1", "192.0.2.0/24");
    expect(named.kind === "hops" && named.networks).toHaveLength(1);
    expect(() => parseTrustProxy("1", "proxy.internal")).toThrow(/TRUST_PROXY_NETWORKS: 'proxy.internal'/);
  });

  it("reads addresses, CIDR networks and named ranges", () => {
    const trust = parseTrustProxy("10.0.0.0/8, 192.0.2.1,2001:db8::/32 , loopback");
    expect(trust.kind).toBe("networks");
    if (trust.kind !== "networks") return;
    expect(trust.networks.map((n) => n.prefix)).toEqual([8, 32, 32, 8, 128]);
  });

  it("refuses 'true', garbage and bad prefixes, naming the entry", () => {
    expect(() => parseTrustProxy("true")).toThrow(/TRUST_PROXY: 'true'/);
    expect(() => parseTrustProxy("proxy.internal")).toThrow(/TRUST_PROXY: 'proxy.internal'/);
    expect(() => parseTrustProxy("10.0.0.0/33")).toThrow(/invalid prefix/);
    expect(() => parseTrustProxy("10.0.0.0/")).toThrow(/invalid prefix/);
    expect(() => parseTrustProxy("10.0.0.0/8/8")).toThrow(/TRUST_PROXY/);
    expect(() => parseTrustProxy("2001:db8::/129")).toThrow(/invalid prefix/);
  });
});

describe("resolveClientAddress", () => {
  const none = parseTrustProxy(undefined);

  it("uses the socket peer and ignores X-Forwarded-For without TRUST_PROXY", () => {
    expect(resolveClientAddress("203.0.113.9", "1.2.3.4", none)).toBe("203.0.113.9");
    expect(resolveClientAddress("203.0.113.9", "1.2.3.4, 5.6.7.8", none)).toBe("203.0.113.9");
    expect(resolveClientAddress("203.0.113.9", null, parseTrustProxy("1"))).toBe("203.0.113.9");
  });

  describe("hops", () => {
    const one = parseTrustProxy("1");
    const two = parseTrustProxy("2");

    it("takes the address the outermost trusted proxy saw", () => {
      // Proxy 10.0.0.1 appended the client 198.51.100.7; whatever came before is the client's own claim.
      expect(resolveClientAddress("10.0.0.1", "198.51.100.7", one)).toBe("198.51.100.7");
      expect(resolveClientAddress("10.0.0.1", "6.6.6.6, 198.51.100.7", one)).toBe("198.51.100.7");
      expect(resolveClientAddress("10.0.0.2", "6.6.6.6, 198.51.100.7, 10.0.0.1", two)).toBe("198.51.100.7");
    });

    it("cannot be spoofed by prepending entries", () => {
      for (const spoof of ["1.1.1.1", "1.1.1.1, 2.2.2.2", "garbage", "::1"]) {
        expect(resolveClientAddress("10.0.0.1", `${spoof}, 198.51.100.7`, one)).toBe("198.51.100.7");
      }
    });

    it("stops at the farthest entry when the chain is shorter than the hop count", () => {
      expect(resolveClientAddress("10.0.0.2", "198.51.100.7", two)).toBe("198.51.100.7");
    });

    it("believes X-Forwarded-For only from a peer inside the trusted networks", () => {
      // The service reached directly from the Internet: the peer is the caller.
      for (const forwarded of ["198.51.100.7", "6.6.6.6, 198.51.100.7"]) {
        expect(resolveClientAddress("203.0.113.9", forwarded, one)).toBe("203.0.113.9");
        expect(resolveClientAddress("2001:db8::9", forwarded, one)).toBe("2001:db8:0:0:0:0:0:9");
      }
      // Two hops: the inner proxy must be trusted too, else it is the caller.
      expect(resolveClientAddress("10.0.0.2", "6.6.6.6, 198.51.100.7, 203.0.113.1", two)).toBe("203.0.113.1");
      // Proxies elsewhere, as configured.
      const elsewhere = parseTrustProxy("1", "192.0.2.0/24");
      expect(resolveClientAddress("192.0.2.10", "198.51.100.7", elsewhere)).toBe("198.51.100.7");
      expect(resolveClientAddress("10.0.0.1", "198.51.100.7", elsewhere)).toBe("10.0.0.1");
    });

    it("falls back to the peer when the chosen entry is not an address", () => {
      expect(resolveClientAddress("10.0.0.1", "not-an-address", one)).toBe("10.0.0.1");
      expect(resolveClientAddress("10.0.0.1", "unknown", one)).toBe("10.0.0.1");
    });

    it("drops ports and normalises the address", () => {
      expect(resolveClientAddress("10.0.0.1", "198.51.100.7:51234", one)).toBe("198.51.100.7");
      expect(resolveClientAddress("10.0.0.1", "[2001:db8::7]:443", one)).toBe("2001:db8:0:0:0:0:0:7");
      expect(resolveClientAddress("10.0.0.1", "::ffff:198.51.100.7", one)).toBe("198.51.100.7");
    });
  });

  describe("networks", () => {
    const trust = parseTrustProxy("10.0.0.0/8,2001:db8:ffff::/48");

    it("walks from the peer outwards and stops at the first untrusted address", () => {
      expect(resolveClientAddress("10.1.2.3", "198.51.100.7", trust)).toBe("198.51.100.7");
      expect(resolveClientAddress("10.1.2.3", "6.6.6.6, 198.51.100.7, 10.9.9.9", trust)).toBe("198.51.100.7");
      expect(resolveClientAddress("2001:db8:ffff::1", "198.51.100.7", trust)).toBe("198.51.100.7");
    });

    it("ignores X-Forwarded-For from a peer outside the trusted networks", () => {
      expect(resolveClientAddress("203.0.113.9", "198.51.100.7", trust)).toBe("203.0.113.9");
      expect(resolveClientAddress("11.0.0.1", "10.0.0.5, 198.51.100.7", trust)).toBe("11.0.0.1");
    });

    it("stops at the last trusted proxy when an entry is not an address", () => {
      expect(resolveClientAddress("10.1.2.3", "198.51.100.7, garbage", trust)).toBe("10.1.2.3");
      expect(resolveClientAddress("10.1.2.3", "garbage, 10.0.0.9", trust)).toBe("10.0.0.9");
    });

    it("takes the farthest address when every hop is trusted", () => {
      expect(resolveClientAddress("10.1.2.3", "10.0.0.8, 10.0.0.9", trust)).toBe("10.0.0.8");
    });

    it("honours prefix lengths that are not byte-aligned", () => {
      const narrow = parseTrustProxy("172.16.0.0/12");
      expect(resolveClientAddress("172.31.255.254", "198.51.100.7", narrow)).toBe("198.51.100.7");
      expect(resolveClientAddress("172.32.0.1", "198.51.100.7", narrow)).toBe("172.32.0.1");
    });

    it("understands the named ranges", () => {
      const named = parseTrustProxy("loopback,uniquelocal");
      expect(resolveClientAddress("127.0.0.1", "198.51.100.7", named)).toBe("198.51.100.7");
      expect(resolveClientAddress("::1", "198.51.100.7", named)).toBe("198.51.100.7");
      expect(resolveClientAddress("192.168.1.1", "198.51.100.7", named)).toBe("198.51.100.7");
      expect(resolveClientAddress("fd00::1", "198.51.100.7", named)).toBe("198.51.100.7");
      expect(resolveClientAddress("8.8.8.8", "198.51.100.7", named)).toBe("8.8.8.8");
    });
  });
});

describe("rateLimitSubject", () => {
  it("keeps IPv4 addresses whole", () => {
    expect(rateLimitSubject("203.0.113.7")).toBe("203.0.113.7");
    expect(rateLimitSubject("::ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("groups IPv6 addresses by /64", () => {
    const a = rateLimitSubject("2001:db8:1:2::1");
    expect(a).toBe("2001:db8:1:2:0:0:0:0/64");
    expect(rateLimitSubject("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe(a);
    expect(rateLimitSubject("[2001:0DB8:0001:0002::9]")).toBe(a);
    expect(rateLimitSubject("2001:db8:1:3::1")).not.toBe(a);
  });

  it("keeps something unparsable apart, bounded in length", () => {
    expect(rateLimitSubject("x".repeat(500))).toBe(`other:${"x".repeat(64)}`);
  });
});

describe("connectionSubject", () => {
  it("keeps IPv4 addresses whole", () => {
    expect(connectionSubject("203.0.113.7")).toBe("203.0.113.7");
    expect(connectionSubject("::ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("groups IPv6 addresses by /48: a host with a /56 is one peer, not 256", () => {
    const a = connectionSubject("2001:db8:1:2::1");
    expect(a).toBe("2001:db8:1:0:0:0:0:0/48");
    for (let subnet = 0; subnet < 256; subnet++) {
      expect(connectionSubject(`2001:db8:1:${(0x1200 + subnet).toString(16)}::7`)).toBe(a);
    }
    expect(connectionSubject("2001:db8:1:ffff:ffff:ffff:ffff:ffff")).toBe(a);
    expect(connectionSubject("2001:db8:2::1")).not.toBe(a);
  });
});
