/**
 * Which IP addresses a delivery may never connect to (unless private networks are allowed): the
 * domain's one classification of IP literals, which endpoint registration uses too.
 */
export { isBlockedAddress, isIpLiteral, parseIPv4, parseIPv6 } from "../../domain/ip-address.ts";
