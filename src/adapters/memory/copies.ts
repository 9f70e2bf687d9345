import type { Scope } from "../../app/ports/paging.ts";

export const inScope = (s: Scope, r: Scope) => r.tenantId === s.tenantId && r.projectId === s.projectId;
// Records are copied in and out, so callers cannot change stored state by holding a reference.
export const copy = <T>(v: T): T => structuredClone(v);
// Events and deliveries are flat records whose Dates are never changed in place (every change assigns a
// new Date), so a shallow copy isolates them as well, at a fraction of the cost on the delivery hot path.
export const flat = <T extends object>(v: T): T => ({ ...v });
