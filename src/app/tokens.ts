import { sha256Hex, toBase64Url } from "../domain/encoding.ts";
import type { Scope } from "./ports/paging.ts";
import type { Clock, Ids } from "./ports/system.ts";
import type { TokenRecord, TokenRepository } from "./ports/tokens.ts";

export const TOKEN_PREFIX = "hrld_";
const TOKEN_PATTERN = /^hrld_[A-Za-z0-9_-]{43}$/;

export interface IssuedToken {
  token: string;
  record: TokenRecord;
}

/** API tokens: created and shown once, stored only as a SHA-256 hash, revocable. */
export function tokenUseCases(deps: { tokens: TokenRepository; clock: Clock; ids: Ids }) {
  // The hash of each token seen lately, so a busy publisher is not hashed on every request. Only the
  // hash is cached, not the answer: the store is still asked each time, so a revocation holds at once.
  const hashes = new Map<string, string>();
  const hashOf = async (token: string) => {
    let hash = hashes.get(token);
    if (hash === undefined) {
      hash = await sha256Hex(token);
      if (hashes.size >= 1_000) hashes.clear();
      hashes.set(token, hash);
    }
    return hash;
  };
  return {
    async create(input: {
      tenantId?: string;
      projectId?: string;
      name?: string | null;
    }): Promise<IssuedToken> {
      // 32 random bytes: 256 bits, written as 43 base64url characters.
      const token = `${TOKEN_PREFIX}${toBase64Url(deps.ids.randomBytes(32))}`;
      const record: TokenRecord = {
        id: deps.ids.uuid(),
        hash: await sha256Hex(token),
        prefix: token.slice(0, 12),
        tenantId: input.tenantId ?? deps.ids.uuid(),
        projectId: input.projectId ?? deps.ids.uuid(),
        name: input.name ?? null,
        createdAt: deps.clock.now(),
        revokedAt: null,
      };
      await deps.tokens.insert(record);
      return { token, record };
    },

    /** The scope of a valid, unrevoked token; null otherwise. */
    async authenticate(token: string): Promise<Scope | null> {
      if (!TOKEN_PATTERN.test(token)) return null;
      const record = await deps.tokens.findByHash(await hashOf(token));
      if (!record || record.revokedAt) return null;
      return { tenantId: record.tenantId, projectId: record.projectId };
    },

    list: () => deps.tokens.list(),
    revoke: (id: string) => deps.tokens.revoke(id, deps.clock.now()),
    count: () => deps.tokens.count(),
  };
}

export type TokenUseCases = ReturnType<typeof tokenUseCases>;
