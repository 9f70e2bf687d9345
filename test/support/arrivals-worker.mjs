// An HTTPS receiver in a thread of its own that notes the moment each request arrives (its headers
// parsed), for tests that measure rates: the test's own thread publishes, polls and checks, and a busy
// moment there must not bunch arrivals together. It verifies each signature (HMAC-SHA256 over
// `<timestamp>.<body>`, with the secrets given for the request's path) and answers 200 either way; the
// test asserts every arrival verified. The main thread asks for the arrivals with {type: "take"}.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:https";
import { parentPort, workerData } from "node:worker_threads";

const arrivals = [];
/** Secrets by request path. */
const secrets = new Map();

function verified(path, timestamp, signature, body) {
  const keys = secrets.get(path) ?? [];
  const given = String(signature ?? "")
    .split(" ")
    .map((s) => s.replace(/^v1=/, ""));
  for (const key of keys) {
    const expected = createHmac("sha256", key).update(`${timestamp}.`).update(body).digest();
    for (const g of given) {
      const got = Buffer.from(g, "hex");
      if (got.length === expected.length && timingSafeEqual(got, expected)) return true;
    }
  }
  return false;
}

const server = createServer({ cert: workerData.cert, key: workerData.key }, (req, res) => {
  const at = Date.now();
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const path = req.url ?? "";
    arrivals.push({
      path,
      eventId: String(req.headers["x-webhook-id"] ?? ""),
      at,
      verified: verified(
        path,
        req.headers["x-webhook-timestamp"],
        req.headers["x-webhook-signature"],
        Buffer.concat(chunks),
      ),
    });
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ type: "ready", port: server.address().port }));
parentPort.on("message", (m) => {
  if (m.type === "secret") {
    secrets.set(m.path, [...(secrets.get(m.path) ?? []), m.secret]);
    parentPort.postMessage({ type: "secret-set", id: m.id });
  } else if (m.type === "take") {
    parentPort.postMessage({ type: "arrivals", id: m.id, arrivals });
  } else if (m.type === "close") {
    server.closeAllConnections();
    server.close(() => parentPort.postMessage({ type: "closed", id: m.id }));
  }
});
