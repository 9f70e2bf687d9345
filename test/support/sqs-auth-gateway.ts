import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { signV4 } from "./sigv4.ts";

// ElasticMQ (scripts/sqs.sh), the tests' SQS, checks no signature and has no setting that makes it: a
// refused credential can only come from something that checks one. This gateway, on loopback in front of
// it, does what AWS's front door does before SQS sees a call: it recomputes the SigV4 signature of each
// request with the secret of its key id, answers AWS's JSON-protocol refusals (an unknown key id:
// UnrecognizedClientException; a wrong secret: InvalidSignatureException, both 400, as AWS's JSON services
// answer) and passes every signed call through to the real server unchanged.

export interface SqsAuthGateway {
  /** The gateway's base URL: an SQS endpoint_url. */
  url: string;
  /** Every call's key id and the refusal it got (null: passed through), in arrival order. */
  calls: { keyId: string; refused: string | null }[];
  close(): Promise<void>;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Why AWS would refuse this signed call, or null when `keys` (key id -> secret) say it is signed right. */
function refusal(
  req: IncomingMessage,
  body: string,
  keys: Record<string, string>,
): { keyId: string; type: string | null } {
  const m = AUTHORIZATION.exec(String(req.headers.authorization ?? ""));
  if (!m) return { keyId: "", type: "MissingAuthenticationTokenException" };
  const [, keyId, , region, service, signed, signature] = m as unknown as string[];
  const secret = keys[keyId!];
  if (secret === undefined) return { keyId: keyId!, type: "UnrecognizedClientException" };
  // The headers the client signed, as it sent them (host and x-amz-date are added back by signV4).
  const headers: Record<string, string> = {};
  for (const name of signed!.split(";")) {
    if (name !== "host" && name !== "x-amz-date") headers[name] = String(req.headers[name] ?? "");
  }
  const again = signV4({
    method: req.method ?? "POST",
    url: `http://${req.headers.host}${req.url}`,
    headers,
    body,
    region: region!,
    service: service!,
    accessKeyId: keyId!,
    secretAccessKey: secret,
    amzDate: String(req.headers["x-amz-date"] ?? ""),
  });
  const ok = again.authorization?.endsWith(`SignedHeaders=${signed}, Signature=${signature}`);
  return { keyId: keyId!, type: ok ? null : "InvalidSignatureException" };
}

const MESSAGES: Record<string, string> = {
  MissingAuthenticationTokenException: "Request is missing Authentication Token",
  UnrecognizedClientException: "The security token included in the request is invalid.",
  InvalidSignatureException:
    "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.",
};

/** A checking gateway on 127.0.0.1 in front of `upstream` (ElasticMQ's base URL). */
export async function startSqsAuthGateway(
  upstream: string,
  keys: Record<string, string>,
): Promise<SqsAuthGateway> {
  const calls: SqsAuthGateway["calls"] = [];
  const server = createServer(async (req, res) => {
    try {
      const body = await bodyOf(req);
      const { keyId, type } = refusal(req, body, keys);
      calls.push({ keyId, refused: type });
      if (type) {
        res.writeHead(400, { "content-type": "application/x-amz-json-1.0" });
        res.end(JSON.stringify({ __type: `com.amazon.coral.service#${type}`, message: MESSAGES[type] }));
        return;
      }
      const forwarded: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === "string" && k !== "host" && k !== "content-length") forwarded[k] = v;
      const answer = await fetch(`${upstream}${req.url}`, { method: "POST", headers: forwarded, body });
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" });
      res.end(await answer.text());
    } catch {
      // The server behind is down: as an unreachable SQS would be to a client, a 503.
      res.writeHead(503).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
