/** One problem with an input, located by a dotted path. */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** The failures a use case can report; the HTTP edge maps each kind to one problem+json answer. */
export type DomainErrorKind =
  | "validation_failed"
  | "not_found"
  | "conflict"
  | "endpoint_disabled"
  | "unauthorized"
  | "rate_limited"
  | "unavailable";

/** A failure a caller can act on, carried as data until the edge turns it into a response. */
export class DomainError extends Error {
  readonly kind: DomainErrorKind;
  readonly issues: ValidationIssue[];

  constructor(kind: DomainErrorKind, message: string, issues: ValidationIssue[] = []) {
    super(message);
    this.name = "DomainError";
    this.kind = kind;
    this.issues = issues;
  }
}

/** The resource does not exist, or belongs to another project (the two are indistinguishable on purpose). */
export function notFound(what: string): DomainError {
  return new DomainError("not_found", `${what} was not found.`);
}

/** Input that is well-formed but breaks a rule. */
export function invalid(issues: ValidationIssue[], message = "The request is not valid."): DomainError {
  return new DomainError("validation_failed", message, issues);
}
