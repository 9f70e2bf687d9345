import { sha256Hex, toBase64Url } from "../domain/encoding.ts";
import { DomainError, invalid, notFound } from "../domain/errors.ts";
import type { EndpointUseCases } from "./endpoints.ts";
import type { ConsoleSessionKind, ConsoleSessionRecord, ConsoleSessionRepository } from "./ports/console.ts";
import type { Scope } from "./ports/paging.ts";
import type { Clock, Ids } from "./ports/system.ts";
import type { TokenUseCases } from "./tokens.ts";

/** How long a signed-in console browser stays signed in. */
export const CONSOLE_SESSION_MS = 12 * 3_600_000;
/** How long a `herald console` sign-in link may wait to be opened (it also works once only). */
export const SIGN_IN_CODE_MS = 5 * 60_000;
/** Portal links: default and longest lifetime. */
export const PORTAL_DEFAULT_SECONDS = 3600;
export const PORTAL_MAX_SECONDS = 86_400;
const PORTAL_MIN_SECONDS = 60;

/** A browser's session as the web layer sees it. */
export interface ConsoleSession {
  id: string;
  kind: "console" | "portal";
  scope: Scope;
  /** Portal restricted to some endpoints; null: all of the project's. */
  webhookIds: string[] | null;
  csrfToken: string;
  expiresAt: Date;
}

export interface IssuedSecret {
  /** The secret for the cookie, code or link; shown once, stored only as a hash. */
  secret: string;
  record: ConsoleSessionRecord;
}

export interface PortalLinkInput {
  expiresInSeconds?: number | undefined;
  webhookIds?: string[] | undefined;
}

/** Console sign-in, sign-in links, customer portal links and the sessions they open. */
export function consoleUseCases(deps: {
  sessions: ConsoleSessionRepository;
  tokens: TokenUseCases;
  endpoints: EndpointUseCases;
  clock: Clock;
  ids: Ids;
}) {
  const { sessions, clock, ids } = deps;
  const random = () => toBase64Url(ids.randomBytes(32));

  async function issue(
    kind: ConsoleSessionKind,
    scope: Scope,
    lifetimeMs: number,
    extra: { webhookIds?: string[] | null; parentId?: string | null; expiresAt?: Date } = {},
  ): Promise<IssuedSecret> {
    const now = clock.now();
    const secret = random();
    const record: ConsoleSessionRecord = {
      id: ids.uuid(),
      hash: await sha256Hex(secret),
      kind,
      tenantId: scope.tenantId,
      projectId: scope.projectId,
      webhookIds: extra.webhookIds ?? null,
      csrfToken: random(),
      parentId: extra.parentId ?? null,
      createdAt: now,
      expiresAt: extra.expiresAt ?? new Date(now.getTime() + lifetimeMs),
      usedAt: null,
      revokedAt: null,
    };
    await sessions.insert(record);
    return { secret, record };
  }

  const live = (r: ConsoleSessionRecord | null, now: Date): r is ConsoleSessionRecord =>
    r !== null && r.revokedAt === null && r.expiresAt.getTime() > now.getTime();

  const scopeOf = (r: ConsoleSessionRecord): Scope => ({ tenantId: r.tenantId, projectId: r.projectId });

  return {
    /** Signs a browser in with a pasted API token; null when the token is unknown or revoked. */
    async signInWithToken(token: string): Promise<IssuedSecret | null> {
      const scope = await deps.tokens.authenticate(token.trim());
      if (!scope) return null;
      return issue("console", scope, CONSOLE_SESSION_MS);
    },

    /** A one-time sign-in code for `herald console`, valid for a few minutes. */
    createSignInCode(scope: Scope): Promise<IssuedSecret> {
      return issue("sign_in_code", scope, SIGN_IN_CODE_MS);
    },

    /** Redeems a sign-in code once for a console session; null when unknown, used or expired. */
    async redeemSignInCode(code: string): Promise<IssuedSecret | null> {
      const now = clock.now();
      const record = await sessions.consume(await sha256Hex(code), now);
      if (!live(record, now) || record.kind !== "sign_in_code") return null;
      return issue("console", scopeOf(record), CONSOLE_SESSION_MS);
    },

    /** A customer portal link for the project, optionally for some of its endpoints only. */
    async createPortalLink(scope: Scope, input: PortalLinkInput): Promise<IssuedSecret> {
      const seconds = input.expiresInSeconds ?? PORTAL_DEFAULT_SECONDS;
      if (!Number.isInteger(seconds) || seconds < PORTAL_MIN_SECONDS || seconds > PORTAL_MAX_SECONDS) {
        throw invalid([
          {
            path: "expires_in",
            message: `must be a whole number of seconds from ${PORTAL_MIN_SECONDS} to ${PORTAL_MAX_SECONDS}`,
          },
        ]);
      }
      let webhookIds: string[] | null = null;
      if (input.webhookIds) {
        webhookIds = [...new Set(input.webhookIds.map((id) => id.toLowerCase()))];
        for (const [i, id] of webhookIds.entries()) {
          try {
            await deps.endpoints.get(scope, id);
          } catch (e) {
            if (e instanceof DomainError && e.kind === "not_found") {
              throw invalid([{ path: `webhook_ids.${i}`, message: `no endpoint ${id} in this project` }]);
            }
            throw e;
          }
        }
      }
      return issue("portal_link", scope, seconds * 1000, { webhookIds });
    },

    /** Revokes a portal link; every browser that opened it is signed out at once. */
    async revokePortalLink(scope: Scope, id: string): Promise<void> {
      if (!(await sessions.revoke(scope, "portal_link", id, clock.now())))
        throw notFound("The portal session");
    },

    /** Opens a portal link in a browser: a portal session that lives no longer than its link. */
    async enterPortal(secret: string): Promise<IssuedSecret | null> {
      const now = clock.now();
      const link = await sessions.findByHash(await sha256Hex(secret));
      if (!live(link, now) || link.kind !== "portal_link") return null;
      return issue("portal", scopeOf(link), 0, {
        webhookIds: link.webhookIds,
        parentId: link.id,
        expiresAt: link.expiresAt,
      });
    },

    /** The live session behind a cookie value, or null (unknown, expired, revoked, or its link revoked). */
    async authenticate(secret: string, kind: "console" | "portal"): Promise<ConsoleSession | null> {
      if (!/^[A-Za-z0-9_-]{43}$/.test(secret)) return null;
      const now = clock.now();
      const record = await sessions.findByHash(await sha256Hex(secret));
      if (!live(record, now) || record.kind !== kind) return null;
      if (record.parentId !== null && !live(await sessions.get(record.parentId), now)) return null;
      return {
        id: record.id,
        kind,
        scope: scopeOf(record),
        webhookIds: record.webhookIds,
        csrfToken: record.csrfToken,
        expiresAt: record.expiresAt,
      };
    },

    /** Signs a browser out: its session stops working at once. */
    async signOut(session: ConsoleSession): Promise<void> {
      await sessions.revoke(session.scope, session.kind, session.id, clock.now());
    },

    /** Forgets records that expired more than a day ago (maintenance). */
    purgeExpired: () => sessions.deleteExpiredBefore(new Date(clock.now().getTime() - 86_400_000)),
  };
}

export type ConsoleUseCases = ReturnType<typeof consoleUseCases>;
