import { createHash, createHmac } from "node:crypto";

/**
 * AWS Signature Version 4, so that SQS needs no AWS SDK (ADR 27): the request's headers plus x-amz-date
 * and Authorization. Checked against AWS's published example in test/brokers/sqs.test.ts; used by the SQS
 * sender and by the tests' own SQS calls. node:crypto, which Node, Bun and Deno all have.
 */
export interface SigV4Request {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  region: string;
  service: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The signing time, as 20150830T123600Z (default: now). */
  amzDate?: string;
}

const sha256 = (data: string) => createHash("sha256").update(data, "utf8").digest("hex");
const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data, "utf8").digest();
// RFC 3986 unreserved characters stay; everything else is %XX (encodeURIComponent leaves !'()* alone).
const encode = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export function signV4(req: SigV4Request): Record<string, string> {
  const url = new URL(req.url);
  const amzDate =
    req.amzDate ??
    new Date()
      .toISOString()
      .replace(/[-:]/g, "")
      .replace(/\.\d{3}/, "");
  const date = amzDate.slice(0, 8);
  const headers: Record<string, string> = { host: url.host, "x-amz-date": amzDate };
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v.trim().replace(/\s+/g, " ");
  const names = Object.keys(headers).sort();
  const query = [...url.searchParams]
    .map(([k, v]) => `${encode(k)}=${encode(v)}`)
    .sort()
    .join("&");
  const canonical = [
    req.method,
    url.pathname || "/",
    query,
    names.map((n) => `${n}:${headers[n]}\n`).join(""),
    names.join(";"),
    sha256(req.body),
  ].join("\n");
  const scope = `${date}/${req.region}/${req.service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonical)].join("\n");
  let key = hmac(`AWS4${req.secretAccessKey}`, date);
  for (const part of [req.region, req.service, "aws4_request"]) key = hmac(key, part);
  const signature = createHmac("sha256", key).update(toSign, "utf8").digest("hex");
  return {
    ...req.headers,
    "x-amz-date": amzDate,
    authorization: `AWS4-HMAC-SHA256 Credential=${req.accessKeyId}/${scope}, SignedHeaders=${names.join(";")}, Signature=${signature}`,
  };
}
