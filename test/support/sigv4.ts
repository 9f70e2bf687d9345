// The tests' SigV4 is the SQS sender's own (ADR 27: it moved to src with the destination).
export { type SigV4Request, signV4 } from "../../src/adapters/destinations/sigv4.ts";
