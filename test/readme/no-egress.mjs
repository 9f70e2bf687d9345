// Preloaded (NODE_OPTIONS=--import) into every Node process the README test starts: host names other
// than localhost do not resolve, so a delivery to https://hooks.example.com fails with ENOTFOUND on this
// machine instead of leaving it. Literal IPs pass (the README uses only 127.0.0.1 and localhost).
import dns from "node:dns";
import { syncBuiltinESMExports } from "node:module";
import { isIP } from "node:net";

const local = (host) => host === "localhost" || isIP(host) !== 0;
const refused = (hostname) =>
  Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (the README test allows no egress)`), {
    code: "ENOTFOUND",
    errno: -3008,
    syscall: "getaddrinfo",
    hostname,
  });

const lookup = dns.lookup;
dns.lookup = function guardedLookup(hostname, options, callback) {
  if (local(hostname)) return lookup.call(this, hostname, options, callback);
  const cb = typeof options === "function" ? options : callback;
  process.nextTick(() => cb(refused(hostname)));
  return {};
};
const promisesLookup = dns.promises.lookup;
dns.promises.lookup = async function guardedPromisesLookup(hostname, options) {
  if (local(hostname)) return promisesLookup.call(this, hostname, options);
  throw refused(hostname);
};
for (const name of ["resolve", "resolve4", "resolve6", "resolveAny"]) {
  dns.promises[name] = async (hostname) => {
    throw refused(hostname);
  };
}
syncBuiltinESMExports();
