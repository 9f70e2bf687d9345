// An endpoint's broker destination on its way in (ADR 27): checked, a password in a RabbitMQ URL taken
// out, credentials sealed like secrets (ADR 13), and the credential-free address the endpoint's `url`
// shows. A change is a merge patch: credentials not given are kept as sealed.
import type { BrokerDestination, DestinationKind } from "../domain/destination.ts";
import {
  credentialIssues,
  destinationIssues,
  splitAmqpUrl,
  sqsAttributeIssues,
} from "../domain/destination-rules.ts";
import {
  type DestinationPatch,
  destinationUrl,
  givenCredentials,
  mapCredentials,
  mergeDestination,
} from "../domain/destination-values.ts";
import type { Endpoint } from "../domain/endpoint.ts";
import { invalid, type ValidationIssue } from "../domain/errors.ts";
import type { AppDeps } from "./deps.ts";

/** A credential as a change holds it: kept sealed, or given in plain text to be sealed. */
type Held = { sealed: string } | { plain: string };

/** A destination ready to store, and the address its endpoint shows as `url`. */
export interface CheckedDestination {
  destination: BrokerDestination<string>;
  url: string;
}

/** What a create or change may say beside the destination that concerns it. */
export interface DestinationContext {
  /** A `url` given with the change or creation (refused: a broker endpoint's url is derived). */
  url: string | undefined;
  /** A client certificate given (refused: mutual TLS is HTTPS's). */
  clientCertificate: boolean;
}

export function destinationChecks(deps: Pick<AppDeps, "cipher" | "policy">) {
  const policy = {
    allowHttp: deps.policy.allowHttpUrls,
    allowPrivateNetworks: deps.policy.allowPrivateNetworks,
  };

  /** A password written in a RabbitMQ URL moves to `password` (an issue when both are given). */
  const withoutUrlPassword = <P extends DestinationPatch>(p: P, issues: ValidationIssue[]): P => {
    if (p.kind !== "rabbitmq" || p.url === undefined) return p;
    const split = splitAmqpUrl(p.url);
    if ("message" in split || split.password === null) return p;
    if (typeof p.password === "string") {
      issues.push({
        path: "rabbitmq.password",
        message: "is given twice: in url and in password; give it once",
      });
      return p;
    }
    return { ...p, url: split.url, password: split.password };
  };

  const contextIssues = (kind: DestinationKind, ctx: DestinationContext): ValidationIssue[] => [
    ...(ctx.url === undefined
      ? []
      : [
          { path: "url", message: `is derived from the ${kind} destination; set the ${kind} object instead` },
        ]),
    ...(ctx.clientCertificate
      ? [{ path: "client_certificate", message: "is for https endpoints only (mutual TLS)" }]
      : []),
  ];

  /**
   * The destination merged, checked (every problem at once), and sealed. `headerNames` are the custom
   * headers the endpoint will have: an SQS queue takes them as message attributes, under AWS's rules.
   */
  async function settle(
    current: BrokerDestination<Held>,
    patch: DestinationPatch,
    headerNames: readonly string[],
    early: ValidationIssue[],
  ): Promise<CheckedDestination> {
    const issues = [...early];
    for (const [path, value] of givenCredentials(patch)) issues.push(...credentialIssues(value, path));
    const merged = mergeDestination<Held>(current, patch, (plain) => ({ plain }));
    if ("missing" in merged) {
      issues.push(...merged.missing.map((path) => ({ path, message: "is required to turn SASL on" })));
      throw invalid(issues);
    }
    issues.push(...destinationIssues(merged, policy));
    if (merged.kind === "sqs") issues.push(...sqsAttributeIssues(headerNames));
    if (issues.length) throw invalid(issues);
    const destination = await mapCredentials(merged, (c) =>
      "sealed" in c ? c.sealed : deps.cipher.seal(c.plain),
    );
    return { destination, url: destinationUrl(destination) };
  }

  return {
    /** A new endpoint's destination (complete: the API's schema required its fields). */
    async create(
      given: BrokerDestination<string>,
      headerNames: readonly string[],
      ctx: DestinationContext,
    ): Promise<CheckedDestination> {
      const early = contextIssues(given.kind, ctx);
      const input = withoutUrlPassword(given as DestinationPatch, early) as BrokerDestination<string>;
      // Every credential counts as given: the merge starts from the input itself.
      const held = await mapCredentials<string, Held>(input, (plain) => ({ plain }));
      return settle(held, { kind: input.kind } as DestinationPatch, headerNames, [
        ...early,
        ...givenCredentials(input).flatMap(([path, value]) => credentialIssues(value, path)),
      ]);
    },

    /**
     * A change of an endpoint's destination, checked with what it depends on (its headers, for SQS);
     * null when the destination stays as it is (an HTTPS endpoint, or a change naming no destination).
     * The kind never changes (422).
     */
    async change(
      current: Endpoint,
      kind: DestinationKind | undefined,
      patch: DestinationPatch | undefined,
      headerNames: readonly string[] | undefined,
      ctx: DestinationContext,
    ): Promise<CheckedDestination | null> {
      const currentKind = current.destination?.kind ?? "https";
      const issues: ValidationIssue[] = [];
      if (kind !== undefined && kind !== currentKind)
        issues.push({
          path: "kind",
          message: `cannot be changed (this endpoint is ${currentKind}): a different kind is a different endpoint; create one`,
        });
      if (patch && patch.kind !== currentKind)
        issues.push({
          path: patch.kind,
          message: `is for ${patch.kind} endpoints; this one is ${currentKind}`,
        });
      if (current.destination === null || issues.length) {
        if (issues.length) throw invalid(issues);
        return null;
      }
      issues.push(...contextIssues(currentKind, ctx));
      if (!patch) {
        // Only the headers may have changed: an SQS queue takes them as attributes, under AWS's rules;
        // the destination itself stays as stored (not checked again, not sealed again).
        if (current.destination.kind === "sqs" && headerNames)
          issues.push(...sqsAttributeIssues(headerNames));
        if (issues.length) throw invalid(issues);
        return null;
      }
      const held = await mapCredentials<string, Held>(current.destination, (sealed) => ({ sealed }));
      const p = withoutUrlPassword(patch, issues);
      return settle(held, p, headerNames ?? current.headers.map((h) => h.name), issues);
    },
  };
}

export type DestinationChecks = ReturnType<typeof destinationChecks>;
