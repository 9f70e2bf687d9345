import {
  type ClientCertificateInput,
  certificateBlocks,
  clientCertificateShapeIssues,
  clientCertificateTimeIssues,
  privateKeyBlock,
  type StoredClientCertificate,
} from "../domain/client-certificate.ts";
import {
  headerInputIssues,
  headerSetIssues,
  mergeHeaders,
  type NamedValue,
} from "../domain/custom-headers.ts";
import type { StoredHeader } from "../domain/endpoint.ts";
import { endpointUrlIssues } from "../domain/endpoint-url.ts";
import { invalid } from "../domain/errors.ts";
import type { EventType } from "../domain/event-catalog.ts";
import type { EventFilter } from "../domain/event-filter.ts";
import { filterIssues } from "../domain/event-filter-compile.ts";
import { type RateLimit, rateLimitIssues } from "../domain/rate-limit.ts";
import type { AppDeps } from "./deps.ts";

/**
 * What an endpoint's settings must satisfy before they are stored: each check throws the 422 naming
 * every problem it found. Headers and a client certificate come back sealed, ready to store.
 */
export function endpointChecks(deps: AppDeps) {
  const { clock, cipher } = deps;

  /** Every problem with a URL and headers to set, together: a 422 names them all at once. */
  const checkInput = (
    url: string | undefined,
    headers: Readonly<Record<string, string | null>> | null | undefined,
  ) => {
    const issues = [
      ...(url === undefined
        ? []
        : endpointUrlIssues(url, {
            allowHttp: deps.policy.allowHttpUrls,
            allowPrivateNetworks: deps.policy.allowPrivateNetworks,
          })),
      ...(headers ? headerInputIssues(headers) : []),
    ];
    if (issues.length) throw invalid(issues);
  };

  /**
   * The headers after a change (checked by checkInput), sealed; or the problems with the whole set
   * (current values are opened to size it).
   */
  const changedHeaders = async (
    current: readonly StoredHeader[],
    change: Readonly<Record<string, string | null>> | null,
  ): Promise<StoredHeader[]> => {
    type Held = { sealed: string | null; plain: string };
    const held: NamedValue<Held>[] = await Promise.all(
      current.map(async (h) => ({
        name: h.name,
        value: { sealed: h.sealed, plain: await cipher.open(h.sealed) },
      })),
    );
    const given =
      change === null
        ? null
        : Object.fromEntries(
            Object.entries(change).map(([name, v]) => [name, v === null ? null : { sealed: null, plain: v }]),
          );
    const merged = mergeHeaders<Held>(held, given);
    const setIssues = headerSetIssues(merged.map((h) => ({ name: h.name, value: h.value.plain })));
    if (setIssues.length) throw invalid(setIssues);
    return Promise.all(
      merged.map(async (h) => ({
        name: h.name,
        sealed: h.value.sealed ?? (await cipher.seal(h.value.plain)),
      })),
    );
  };

  /**
   * A client certificate checked and ready to store (ADR 22): PEM shape, the certificate and key read
   * (an encrypted key decrypted with its passphrase), the key matching the certificate, valid now, and
   * an https:// URL to present it on. The key is sealed like a secret; the passphrase is not kept.
   */
  const readCertificate = async (
    input: ClientCertificateInput,
    url: string,
  ): Promise<StoredClientCertificate> => {
    const path = "client_certificate";
    const shape = clientCertificateShapeIssues(input, path);
    if (shape.length) throw invalid(shape);
    if (!url.startsWith("https://"))
      throw invalid([
        { path, message: "needs an https:// endpoint URL: it is presented in the TLS handshake" },
      ]);
    // Only the PEM blocks are read and kept (shape checked above: one key, at least one certificate).
    const read = deps.certificates.read(
      { ...input, privateKey: privateKeyBlock(input.privateKey) ?? input.privateKey },
      path,
    );
    if (!read.ok) throw invalid(read.issues);
    const time = clientCertificateTimeIssues(read.facts, clock.now(), path);
    if (time.length) throw invalid(time);
    return {
      ...read.facts,
      certificate: `${certificateBlocks(input.certificate).join("\n")}\n`,
      sealedKey: await cipher.seal(read.privateKey),
    };
  };

  const checkRateLimit = (limit: RateLimit | null | undefined) => {
    const issues = limit ? rateLimitIssues(limit) : [];
    if (issues.length) throw invalid(issues.map((message) => ({ path: "rate_limit", message })));
  };

  /** A filter must be valid and name only data fields of the endpoint's event types. */
  const checkFilter = (filter: EventFilter | null | undefined, events: readonly EventType[]) => {
    if (filter === undefined || filter === null) return;
    const issues = filterIssues(filter, { events });
    if (issues.length) throw invalid(issues);
  };

  return { checkInput, changedHeaders, readCertificate, checkRateLimit, checkFilter };
}

export type EndpointChecks = ReturnType<typeof endpointChecks>;
