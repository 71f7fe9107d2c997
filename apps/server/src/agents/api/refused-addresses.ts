import { BlockList, isIPv4 } from "node:net";

/**
 * Addresses `http_get` never connects to, whatever name the user allowed: this machine (loopback,
 * and the unspecified address, which Linux routes to it), link-local (169.254/16 and fe80::/10:
 * cloud metadata endpoints live there), multicast and broadcast. Private ranges (10/8,
 * 172.16/12, 192.168/16, fc00::/7) stay reachable: a user who allows a LAN host's name means it.
 * The two metadata services that sit outside link-local are named one by one.
 */
const V4: [string, number, string][] = [
  ["0.0.0.0", 8, "the unspecified address (this machine)"],
  ["127.0.0.0", 8, "loopback (this machine)"],
  ["169.254.0.0", 16, "link-local (cloud metadata lives there)"],
  ["100.100.100.200", 32, "a cloud metadata endpoint"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved or broadcast"],
];
const V6: [string, number, string][] = [
  ["::1", 128, "loopback (this machine)"],
  ["::", 128, "the unspecified address (this machine)"],
  ["::", 96, "an IPv4-compatible address (deprecated)"],
  ["fe80::", 10, "link-local (cloud metadata lives there)"],
  ["fec0::", 10, "site-local (deprecated link scope)"],
  ["ff00::", 8, "multicast"],
  ["fd00:ec2::254", 128, "a cloud metadata endpoint"],
];
/** IPv6 prefixes that carry an IPv4 address in their last 32 bits and reach it: mapped (::ffff:0:0/96) and NAT64. */
const EMBEDDING_V4 = ["::ffff:", "64:ff9b::"];

const reasons = new Map<string, BlockList>();
for (const [net, prefix, reason] of V4) {
  const list = reasons.get(reason) ?? new BlockList();
  list.addSubnet(net, prefix, "ipv4");
  for (const head of EMBEDDING_V4) list.addSubnet(`${head}${net}`, 96 + prefix, "ipv6");
  reasons.set(reason, list);
}
for (const [net, prefix, reason] of V6) {
  const list = reasons.get(reason) ?? new BlockList();
  list.addSubnet(net, prefix, "ipv6");
  reasons.set(reason, list);
}

/** Why `address` (an IPv4 or IPv6 literal) is refused, or undefined when it may be reached. */
export function refusedAddress(address: string): string | undefined {
  const family = isIPv4(address) ? "ipv4" : "ipv6";
  for (const [reason, list] of reasons) if (list.check(address, family)) return reason;
  return undefined;
}
