// A fast local receiver in its own thread: answers 200 at once and records when each event reached
// each endpoint path. The main thread asks for the records at the end.
//
// It speaks just enough HTTP/1.1 over raw TCP for Herald's deliveries (keep-alive, Content-Length
// bodies, pipelining), because Node's full HTTP server costs several times more per request and would
// share the machine's two cores with Herald: the benchmark should measure Herald, not its receiver.
import { createServer } from "node:net";
import { parentPort } from "node:worker_threads";

const RESPONSE = Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: 0\r\nkeep-alive: timeout=60\r\n\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");
const receipts = [];
// (event, endpoint) pairs received since the last take: the run waits for every pair, so a delivery
// sent twice cannot stand in for one that is missing.
const pairs = new Set();

/** A header's value: the name found case-insensitively in `lower`, the value taken from `raw`. */
function header(raw, lower, name) {
  const at = lower.indexOf(`\r\n${name}:`);
  if (at < 0) return null;
  const start = at + name.length + 3;
  const end = lower.indexOf("\r\n", start);
  return raw.slice(start, end < 0 ? undefined : end).trim();
}

const server = createServer((socket) => {
  socket.setNoDelay(true);
  let buf = Buffer.alloc(0);
  socket.on("data", (chunk) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    let answers = 0;
    for (;;) {
      const headEnd = buf.indexOf(HEAD_END);
      if (headEnd < 0) break;
      const head = buf.toString("latin1", 0, headEnd);
      const lower = head.toLowerCase();
      if (header(head, lower, "transfer-encoding")) {
        socket.destroy(new Error("the benchmark receiver expects Content-Length bodies"));
        return;
      }
      const length = Number(header(head, lower, "content-length") ?? 0);
      const total = headEnd + 4 + length;
      if (buf.length < total) break;
      const path = head.slice(head.indexOf(" ") + 1, head.indexOf(" ", head.indexOf(" ") + 1));
      const id = header(head, lower, "x-webhook-id") ?? "";
      receipts.push([id, path, Date.now()]);
      pairs.add(`${id} ${path}`);
      buf = buf.subarray(total);
      answers++;
    }
    if (answers === 1) socket.write(RESPONSE);
    else if (answers > 1) socket.write(Buffer.concat(Array.from({ length: answers }, () => RESPONSE)));
  });
  socket.on("error", () => {});
});
server.listen(0, "127.0.0.1", () => {
  parentPort?.postMessage({ type: "ready", port: server.address().port });
});
parentPort?.on("message", (m) => {
  if (m.type === "count")
    parentPort?.postMessage({ type: "count", count: receipts.length, distinct: pairs.size });
  if (m.type === "take") {
    pairs.clear();
    parentPort?.postMessage({ type: "receipts", receipts: receipts.splice(0) });
  }
  if (m.type === "close") server.close(() => process.exit(0));
});
