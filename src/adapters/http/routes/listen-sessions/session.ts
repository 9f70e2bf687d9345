import type { Scope } from "../../../../app/ports/paging.ts";
import { DomainError, notFound } from "../../../../domain/errors.ts";
import { listenSessionKey } from "../../../../domain/listen-url.ts";
import type { ListenSessions } from "../../../listen/sessions.ts";
import type { HttpDeps } from "../../env.ts";

/** Who may answer a session's deliveries: the project of the token that opened its stream. */
export function ownerOf(scope: Scope): string {
  return `${scope.tenantId}/${scope.projectId}`;
}

/**
 * The session key of the token's endpoint `id`: 404 when the project has no such endpoint (or this
 * server holds no sessions), 409 when it delivers to a URL rather than to a listen session.
 */
export async function sessionOf(
  deps: HttpDeps,
  scope: Scope,
  id: string,
): Promise<{ listen: ListenSessions; session: string }> {
  if (!deps.listen) throw notFound("Listen sessions");
  const endpoint = await deps.endpoints.get(scope, id);
  const session = listenSessionKey(endpoint.url);
  if (session === null) {
    throw new DomainError(
      "conflict",
      "This endpoint delivers to a URL, not to a listen session (create one with POST /listen-sessions).",
    );
  }
  return { listen: deps.listen, session };
}
