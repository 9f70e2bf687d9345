// A fast local receiver in its own thread: answers 200 at once and records when each event reached
// each endpoint path. The main thread asks for the records at the end.
import { createServer } from "node:http";
import { parentPort } from "node:worker_threads";

const receipts = [];
const server = createServer((req, res) => {
  const id = req.headers["x-webhook-id"];
  req.on("data", () => {});
  req.on("end", () => {
    receipts.push([String(id), req.url ?? "/", Date.now()]);
    res.writeHead(200, { "content-length": "0" });
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  parentPort?.postMessage({ type: "ready", port: server.address().port });
});
parentPort?.on("message", (m) => {
  if (m.type === "count") parentPort?.postMessage({ type: "count", count: receipts.length });
  if (m.type === "take") {
    parentPort?.postMessage({ type: "receipts", receipts: receipts.splice(0) });
  }
  if (m.type === "close") server.close(() => process.exit(0));
});
